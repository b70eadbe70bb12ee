/* Configuration from the environment (config.c): env_defs.h declares every GSHMEM_* variable
 * once; gshmemi_config has one field per row, filled by gshmemi_config_load. */
#ifndef GSHMEMI_CONFIG_H
#define GSHMEMI_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gshmemi_config {
#define GSHMEMI_ENV_FIELD(name, kind, ctype, def, help) ctype name;
#include "env_defs.h"
#undef GSHMEMI_ENV_FIELD
} gshmemi_config;

/* The process's configuration: defaults until gshmemi_config_load(&gshmemi_cfg). */
extern gshmemi_config gshmemi_cfg;
/* Parses every variable (a bad value is an error naming the variable; the field keeps its
 * default). The first load of a process also warns about unknown GSHMEM_* names. Loading
 * into gshmemi_cfg sets the messages' debug level (GSHMEM_DEBUG). */
gshmemi_status gshmemi_config_load(gshmemi_config *cfg);
/* Reads NVSHMEM's variables (env_nvshmem.h) into cfg where their GSHMEM_ counterparts are
 * unset (gshmemi_config_load does this silently); with warn, says once per variable what gshmem
 * cannot honour. Returns how many such variables are set. */
int gshmemi_config_nvshmem(gshmemi_config *cfg, bool warn);
/* gshmem_init: the warnings of gshmemi_config_nvshmem, once per process (a launcher that
 * reads the configuration does not repeat them for the programs it starts). */
void gshmemi_config_nvshmem_warn(void);
/* Warns about each GSHMEM_* variable of the environment that env_defs.h does not declare
 * (GSHMEM_TEST_* excepted: the test suite's), with the nearest name; returns how many. */
int gshmemi_config_warn_unknown(void);
/* The table: name, value, meaning, one variable a line, columns aligned. */
void gshmemi_config_print(const gshmemi_config *cfg, FILE *out);
/* Parses "1G", "512M", "4096", "64k" (binary units). Returns false on junk. */
bool gshmemi_parse_size(const char *s, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif
