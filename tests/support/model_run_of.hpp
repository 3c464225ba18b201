// The trained transformer a pipeline runs now, for tests that check ModelRun itself (its forward
// pass, its own copy of the weights); null when the pipeline's current run is another family's.
#pragma once

#include "core/pipeline/model_run.hpp"
#include "core/pipeline/pipeline.hpp"

namespace attnviz {

inline const ModelRun* model_run_of(const Pipeline& pipeline) {
  return dynamic_cast<const ModelRun*>(&pipeline.current());
}

}  // namespace attnviz
