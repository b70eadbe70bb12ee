/* The team pool (team.c) as the rest of the library sees it: built at init, torn down at
 * finalize, and the lookup the collectives start from. */
#ifndef GSHMEMI_TEAM_TEAM_H
#define GSHMEMI_TEAM_TEAM_H

#include "status.h"

struct gshmemi_state;
struct gshmemi_team;

/* Builds the team pool, the device team table, GSHMEM_TEAM_WORLD and GSHMEM_TEAM_SHARED. */
gshmemi_status gshmemi_teams_init(struct gshmemi_state *s);
/* Reports teams the program did not destroy; frees the host side. */
void gshmemi_teams_finalize(struct gshmemi_state *s);
/* The host copy of a team's device entry if `team` is valid on this PE and this PE is a
 * member; else prints "<call>: ..." and returns NULL. */
const struct gshmemi_team *gshmemi_team_lookup(int team, const char *call);

#endif
