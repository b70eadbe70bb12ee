/* A program whose gshmem_init fails (test_init_fail.sh sets a bad GSHMEM_BOOTSTRAP): what it
 * printed before must still reach its stdout when that is a pipe or a file. */
#include <stdio.h>

#include "gshmem.h"

int main(void) {
    printf("printed before gshmem_init\n");
    gshmem_init();
    printf("gshmem_init returned\n");
    return 0;
}
