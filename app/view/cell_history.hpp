// The Neuron view's history of one cell: its raw score, its scaled score and its weight α, one
// entry per computed result, for one (head, query, key, score function). Choosing another cell
// starts a new history; a result computed again without a change adds nothing. No ImGui:
// unit-tested.
#pragma once

#include "app/view/memo.hpp"
#include "core/base/types.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace attnviz::view {

// The last kCapacity values of one number, oldest first, in a fixed ring (no allocation).
class Series {
 public:
  static constexpr int kCapacity = 200;
  void clear() { count_ = next_ = 0; }
  void push(float v) {
    values_[static_cast<std::size_t>(next_)] = v;
    next_ = (next_ + 1) % kCapacity;
    count_ = std::min(count_ + 1, kCapacity);
  }
  int count() const { return count_; }
  float at(int k) const {  // k = 0 is the oldest
    return values_[static_cast<std::size_t>((next_ - count_ + k + kCapacity) % kCapacity)];
  }

 private:
  std::array<float, kCapacity> values_{};
  int count_ = 0, next_ = 0;
};

class CellHistory {
 public:
  // The cell's values in the result of `version`: a new entry when the version is new, a new
  // history when the cell is another.
  void record(std::uint64_t version, int head, int query, int key, Compatibility compatibility,
              float raw_score, float scaled_score, float weight) {
    const bool new_cell = cell_.changed(head, query, key, compatibility);
    const bool new_result = result_.changed(version);
    if (new_cell) {
      scores.clear();
      scaled.clear();
      weights.clear();
    } else if (!new_result && scores.count() > 0) {
      return;
    }
    scores.push(raw_score);
    scaled.push(scaled_score);
    weights.push(weight);
  }

  Series scores, scaled, weights;

 private:
  Memo<int, int, int, Compatibility> cell_;  // head, query, key, score function
  Memo<std::uint64_t> result_;               // the result's version
};

}  // namespace attnviz::view
