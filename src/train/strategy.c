/* train: the densification strategies, by the value of splat_train_desc.strategy. */
#include "train/strategy.h"

const splat_strategy_ops *splat__strategy_ops(splat_strategy kind)
{
    switch (kind) {
    case SPLAT_STRATEGY_DEFAULT: return &splat__strategy_default;
    case SPLAT_STRATEGY_MCMC: return &splat__strategy_mcmc;
    }
    return NULL;
}
