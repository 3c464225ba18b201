// The engine's fork-join helper threads (core/engine/workers.hpp) lent to the packed weight
// products of the models (core/models/blas.hpp's SplitProducts): a thread that owns a
// ProductWorkers and puts `blas::SplitProducts split(&product_workers)` in scope has its
// products with enough work split by panels over it and its helpers, the same floats bit for bit.
#pragma once

#include "core/engine/workers.hpp"
#include "core/models/blas.hpp"

namespace attnviz {

class ProductWorkers final : public blas::ProductHelpers {
 public:
  // threads >= 1: the thread that multiplies and threads - 1 helpers (1 without threads).
  explicit ProductWorkers(int threads) : workers_(threads) {}

  int threads() const override { return workers_.threads(); }
  void run(int count, void* context, void (*task)(void* context, int i)) override {
    auto call = [context, task](int i) { task(context, i); };
    workers_.run(count, call);
  }

 private:
  Workers workers_;
};

}  // namespace attnviz
