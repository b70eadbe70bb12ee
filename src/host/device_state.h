/* The device-state registry (device_state.c): every translation unit that includes gshmem.h
 * registers an updater at load time (gshmem/device/state.h); publishing pushes this PE's
 * device view to all of them. */
#ifndef GSHMEMI_DEVICE_STATE_H
#define GSHMEMI_DEVICE_STATE_H

#include "status.h"

struct gshmemi_state;

/* Pushes s->dstate to every registered unit. */
gshmemi_status gshmemi_device_state_publish(struct gshmemi_state *s);
/* After finalize: every unit sees version 0 again, so device calls fail loudly. */
void gshmemi_device_state_clear(void);

#endif
