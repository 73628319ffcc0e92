/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Zero runs in a buffer read for copying (src/zero.c). */
#ifndef PDD_ZERO_H
#define PDD_ZERO_H

#include <stdbool.h>
#include <stddef.h>

bool pdd_is_zero(const void *p, size_t len);
size_t pdd_zero_run(const void *p, size_t len, size_t g, bool *zero);

#endif
