// What a view computed, and from what: the one way the views keep a result until its inputs
// change (the result's version, the head, a setting), in place of a hand-written "version_ ==
// r.version && head_ == head" and the fields set after it.
//
//   Memo<std::uint64_t, int> scores_;           // inputs: the result's version, the head
//   if (scores_.changed(r.version, head)) compute_scores(r, head);
#pragma once

#include <tuple>
#include <utility>

namespace attnviz::view {

template <typename... Inputs>
class Memo {
 public:
  // Whether the inputs differ from those of the last call that returned true (always true the
  // first time, and after forget()); they are remembered when they do.
  bool changed(const Inputs&... inputs) {
    if (known_ && last_ == std::tie(inputs...)) return false;
    last_ = std::tuple<Inputs...>(inputs...);
    known_ = true;
    return true;
  }
  // As changed(), without remembering: whether what was kept is for these inputs.
  bool holds(const Inputs&... inputs) const { return known_ && last_ == std::tie(inputs...); }
  // The next changed() is true whatever its inputs (a computation that failed, a new document).
  void forget() { known_ = false; }
  // The inputs last remembered (what the kept result is of).
  const std::tuple<Inputs...>& inputs() const { return last_; }

 private:
  std::tuple<Inputs...> last_{};
  bool known_ = false;
};

}  // namespace attnviz::view
