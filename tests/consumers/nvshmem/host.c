/* A C program that includes NVSHMEM's headers (host calls only): gshmem's compatibility
 * headers compile as C, and it links and runs without a GPU. */
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

int main(void) {
    char name[NVSHMEM_MAX_NAME_LEN];
    int major = 0, minor = 0, patch = 0;
    nvshmem_info_get_name(name);
    nvshmemx_vendor_get_version_info(&major, &minor, &patch);
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(0, 1, &id, &attr);
    printf("nvshmem consumer: %s, NVSHMEM %d.%d API, status %d\n", name, major, minor,
           nvshmemx_init_status());
    return attr.args.uid_args.nranks == 1 && sizeof id == 128 ? 0 : 1;
}
