/* attnrank: exact linear algebra for the rank and expressivity of attention.
 * Umbrella header: includes every public module. */
#ifndef ATTNRANK_H
#define ATTNRANK_H

#include "export.h"
#include "status.h"
#include "attnrank/version.h" /* generated (a build tree keeps it apart) */
#include "matrix.h"
#include "spectrum.h"
#include "rank.h"
#include "random.h"
#include "attention.h"
#include "io.h"
#include "bottleneck.h"
#include "mask.h"
#include "masked.h"
#include "collapse.h"
#include "softmax_bottleneck.h"
#include "seprank.h"
#include "depthwidth.h"
#include "check.h"
#include "weights.h"
#include "multihead.h"
#include "safetensors.h"
#include "model_config.h"
#include "spectrum_dist.h"
#include "head_scores.h"
#include "represent_stack.h"
#include "heads_run.h"
#include "represent_run.h"
#include "spectrum_run.h"
#include "verify.h"
#include "bias.h"
#include "circuits.h"
#include "circuits_model.h"
#include "depthwidth_run.h"
#include "json.h"
#include "schema.h"
#include "options.h"
#include "option_table.h"

#endif
