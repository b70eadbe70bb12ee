/* gshmrun's GPU count and CUDA MPS handling (gshmrun_mps.c). */
#ifndef GSHMRUN_MPS_H
#define GSHMRUN_MPS_H

/* GPUs a PE started now would see (a child process asks CUDA); -1 if it cannot tell. */
int gshmrun_count_gpus(void);
/* When npes > ngpus, or the job spans nodes (across_nodes: each PE's proxy has a CUDA context
 * of its own that would share the GPU with the PE's by time slices), and mode is not "off":
 * uses the MPS daemon running at
 * CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps), else starts a private one and points
 * this process's environment (inherited by the PEs) at it; sets
 * CUDA_MPS_ACTIVE_THREAD_PERCENTAGE to each PE's share unless already set. Returns 1 when
 * the PEs will run under MPS. */
int gshmrun_mps_setup(int npes, int ngpus, const char *mode, int debug, int across_nodes);
/* Stops a daemon gshmrun started (no-op otherwise). Safe to call more than once. */
void gshmrun_mps_stop(void);

#endif
