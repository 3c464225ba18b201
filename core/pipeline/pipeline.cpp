#include "core/pipeline/pipeline.hpp"

#include "core/pipeline/model_run.hpp"
#include "core/pipeline/one_layer_run.hpp"

#include <utility>

namespace attnviz {

const RunFamily& transformer_family() {
  static const RunFamily family{"transformer",
                                [](const Scenario& scenario) { return scenario.has_model(); },
                                [] { return std::unique_ptr<Run>(std::make_unique<ModelRun>()); }};
  return family;
}

const RunFamily& one_layer_family() {
  static const RunFamily family{
      "one-layer", [](const Scenario& scenario) { return !scenario.has_model(); },
      [] { return std::unique_ptr<Run>(std::make_unique<OneLayerRun>()); }};
  return family;
}

Pipeline::Pipeline() {
  current_ = &run_for(one_layer_family());
}

Pipeline::~Pipeline() = default;
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;

Run& Pipeline::run_for(const RunFamily& family) {
  for (Kept& kept : runs_)
    if (kept.family == &family) return *kept.run;
  Kept& kept = runs_.emplace_back(Kept{&family, family.make()});
  kept.run->set_threads(threads_);
  return *kept.run;
}

Status Pipeline::run(const Scenario& scenario) {
  const RunFamily* family = registered_family_for(scenario);
  if (!family)
    family = transformer_family().claims(scenario) ? &transformer_family() : &one_layer_family();
  Run& run = run_for(*family);
  if (Status status = run.run(scenario); !status) return status;
  current_ = &run;
  return Status::success();
}

void Pipeline::set_threads(int threads) {
  threads_ = threads;
  for (Kept& kept : runs_) kept.run->set_threads(threads);
}

}  // namespace attnviz
