/* Collectives on teams, on the device: one implementation per collective, templated on the
 * group shape (thread, warp, block) and run on one channel c of nch. A user's kernel calls
 * them with one group (c = 0, nch = 1); the on-stream kernels run nch blocks, block c on
 * channel c, each moving slice c of the data. Two algorithm families:
 *
 * one-shot (small messages, teams with scratch): every member pushes what the others need
 *   into their scratch buffer as LL words (data and flag in one store; parity = this team's
 *   one-shot count & 1), and each member finishes locally from its scratch as the words
 *   arrive, with no separate flag round. A member can be at most one one-shot ahead of
 *   another (it cannot finish one without a word from everybody), so two buffers per sender
 *   suffice. The on-stream kernels split one message between up to ONESHOT_CHANNELS blocks
 *   (slice c at the same offset of every buffer).
 * two-round (everything else): a round announces arrival (sources ready, destinations free),
 *   the members move data straight between the symmetric user buffers over NVLink, and a
 *   second round announces completion (all reads of my source and writes to my destination
 *   done). Reductions and scans are "owner computes": member o reads element range o of
 *   every member's source, combines, and writes the results to every member's destination,
 *   so in-place calls (dest == source) are safe and every PE gets bit-identical results.
 *
 * GSHMEM_DEBUG >= 1: the first round also exchanges a signature (collective, element size,
 * operator, count, root) and a member whose peers called something else stops the job with a
 * message naming both. */
#ifndef GSHMEM_DEVICE_COLL_H
#define GSHMEM_DEVICE_COLL_H

/* One header per concern (include/gshmem/device/coll/): */
#include "coll/ops.h"       /* operators and accumulator types */
#include "coll/rule.h"      /* slicing and the one-shot rule, shared with the host's plan */
#include "coll/rounds.h"    /* addressing, entry checks, signatures, rounds */
#include "coll/combine.h"   /* the two-round element-wise combine */
#include "coll/ll.h"        /* the LL word protocol */
#include "coll/oneshot.h"   /* the one-shot path */
#include "coll/reduce.h"    /* reductions, reduce-scatter, scans */
#include "coll/move.h"      /* broadcast, fcollect, collect, alltoall(s) */
#include "coll/api.h"       /* entry points by team handle (and across nodes), public names */

#endif
