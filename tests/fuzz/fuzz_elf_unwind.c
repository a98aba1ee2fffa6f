/* The CFI reader (unwind_rows_build): every binary a traced process maps
 * is read, and any user can map a file they wrote. The input is that file
 * (.eh_frame, .eh_frame_hdr, .debug_frame and .gnu_debuglink are all
 * parsed); its rows are then laid out as the kernel's table and looked up,
 * as unwind_tables does before publishing them. */
#include "fuzz_util.h"
#include "unwind_rows.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct unwind_rows r;
    if (unwind_rows_build(fuzz_file(data, size, "lib.so"), &r) != 0)
        return 0;
    size_t n;
    free(unwind_rows_table(&r, &n));
    for (size_t i = 0; i < r.n; i++) {
        if (i && r.rows[i].pc <= r.rows[i - 1].pc)
            abort();   /* the header promises sorted, distinct pcs */
        if (unwind_rows_find(&r, r.rows[i].pc) != &r.rows[i])
            abort();
    }
    unwind_rows_free(&r);
    return 0;
}
