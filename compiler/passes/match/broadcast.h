/*
 * broadcast.h — numpy broadcasting of two operands onto an output shape,
 * as the strides of tidsp_broadcast (0 on broadcast dimensions).
 */
#ifndef CSTATIC_BROADCAST_H
#define CSTATIC_BROADCAST_H

#include "ir.h"

/* Returns 0 if the shapes do not broadcast to y's shape or the rank is too
 * large. */
int cs_broadcast_init(const cs_value *a, const cs_value *b, const cs_value *y,
                      tidsp_broadcast *bc);

#endif
