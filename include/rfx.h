/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx.h - random feature expansions: the public C API, one include.
 *
 * An umbrella over the headers of the parts, each of which compiles on its
 * own and includes what it uses:
 *   rfx/core.h        version, errors, instruction sets, matrix views,
 *                     progress callbacks; the conventions of the whole API
 *   rfx/features.h    random Fourier feature maps
 *   rfx/model.h       sources, statistics, ridge / Bayes fits, models, files
 *   rfx/data.h        CSV and .npy files
 *   rfx/surrogate.h, l1.h, pce.h, srfe.h, projection.h   surrogate modelling
 *   rfx/kernels.h, nystroem.h, kernel_sgd.h             exact kernel machines
 *   rfx/classify.h, sinks.h, attention.h                classification,
 *                     kitchen sinks, softmax attention
 *   rfx/sketch.h      Tensor Sketch, random Maclaurin, chi2 feature maps
 */
#ifndef RFX_H
#define RFX_H

#include "rfx/core.h"
#include "rfx/features.h"
#include "rfx/model.h"
#include "rfx/data.h"
#include "rfx/surrogate.h"
#include "rfx/l1.h"
#include "rfx/pce.h"
#include "rfx/srfe.h"
#include "rfx/projection.h"
#include "rfx/kernels.h"
#include "rfx/classify.h"
#include "rfx/sinks.h"
#include "rfx/attention.h"
#include "rfx/kernel_sgd.h"
#include "rfx/nystroem.h"
#include "rfx/sketch.h"
#include "rfx/auto.h"
#include "rfx/blr.h"

#endif /* RFX_H */
