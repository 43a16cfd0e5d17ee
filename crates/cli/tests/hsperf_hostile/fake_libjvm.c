/* A stand-in for HotSpot's libjvm.so, for tests of readers that trust nothing a process
 * shows them. It exports what pauselab's memory route reads (the gHotSpotVMStructs table
 * and its layout variables) and publishes a small valid perf data region at
 * PerfMemory::_start.._end.
 *
 * Build: cc -shared -fPIC -o DIR/libjvm.so fake_libjvm.c [-DTYPE_NAME_OFFSET=...]
 * With the default layout a reader finds the region and its six prologue counters; a
 * hostile TYPE_NAME_OFFSET (e.g. 0xFFFFFFFFFFFFFFFC) must be refused with an error. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct vm_struct_entry {
    const char *type_name;
    const char *field_name;
    const char *type_string;
    int32_t is_static;
    uint64_t offset;
    void *address;
};

static char perf_region[4096] __attribute__((aligned(8)));
char *perf_start;
char *perf_end;

static struct vm_struct_entry entries[] = {
    {"Universe", "_collectedHeap", "CollectedHeap*", 1, 0, NULL},
    {"PerfMemory", "_start", "char*", 1, 0, &perf_start},
    {"PerfMemory", "_end", "char*", 1, 0, &perf_end},
    {NULL, NULL, NULL, 0, 0, NULL},
};

#ifndef TYPE_NAME_OFFSET
#define TYPE_NAME_OFFSET offsetof(struct vm_struct_entry, type_name)
#endif
#ifndef ARRAY_STRIDE
#define ARRAY_STRIDE sizeof(struct vm_struct_entry)
#endif

uint64_t gHotSpotVMStructEntryArrayStride = ARRAY_STRIDE;
uint64_t gHotSpotVMStructEntryTypeNameOffset = TYPE_NAME_OFFSET;
uint64_t gHotSpotVMStructEntryFieldNameOffset = offsetof(struct vm_struct_entry, field_name);
uint64_t gHotSpotVMStructEntryAddressOffset = offsetof(struct vm_struct_entry, address);
struct vm_struct_entry *gHotSpotVMStructs = entries;

/* A version 2.0 little-endian prologue with no entries, accessible. */
__attribute__((constructor)) static void publish_region(void) {
    const unsigned char prologue[32] = {
        0xCA, 0xFE, 0xC0, 0xC0, 1, 2, 0, 1, /* magic, little endian, 2.0, accessible */
        32, 0, 0, 0, 0, 0, 0, 0,            /* used = 32, overflow = 0 */
        7, 0, 0, 0, 0, 0, 0, 0,             /* mod_time_stamp = 7 */
        32, 0, 0, 0, 0, 0, 0, 0,            /* entry offset = 32, no entries */
    };
    memcpy(perf_region, prologue, sizeof prologue);
    perf_start = perf_region;
    perf_end = perf_region + sizeof perf_region;
}
