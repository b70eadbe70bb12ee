/* A host-only C program of a downstream project: links libgshmem with gcc/clang and runs
 * without a GPU (it only asks the library for its name). */
#include <gshmem.h>
#include <stdio.h>

int main(void) {
    char name[GSHMEM_MAX_NAME_LEN];
    gshmem_info_get_name(name);
    printf("consumer: %s\n", name);
    return 0;
}
