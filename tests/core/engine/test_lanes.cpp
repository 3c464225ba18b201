// core/engine/lanes.hpp: the 16-float operations the engine is written in. `make test` runs these
// twice: built for this machine (AVX-512 here) and in the sanitizer build, which is portable (the
// Eigen array path). Each is compared with plain scalar code.
#include "core/base/types.hpp"
#include "core/engine/lanes.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace attnviz {
namespace {

using lanes::kLanes;
using lanes::Lanes;
constexpr float kInf = std::numeric_limits<float>::infinity();

std::array<float, 16> to_array(Lanes a) {
  std::array<float, 16> out{};
  lanes::store(out.data(), a);
  return out;
}

TEST_CASE("lanes: a partial load pads and a partial store writes only its lanes") {
  std::array<float, 16> source{};
  for (int j = 0; j < 16; ++j) source[size_t(j)] = float(j + 1);
  for (Eigen::Index n = 0; n < kLanes; ++n) {
    CAPTURE(n);
    const std::array<float, 16> loaded = to_array(lanes::load_partial(source.data(), n, -7.0f));
    std::array<float, 16> stored;
    stored.fill(99.0f);
    lanes::store_partial(stored.data(), lanes::load(source.data()), n);
    std::array<float, 16> copied;
    copied.fill(99.0f);
    lanes::copy_partial(source.data(), copied.data(), n);
    for (Eigen::Index j = 0; j < kLanes; ++j) {
      CHECK(loaded[size_t(j)] == (j < n ? float(j + 1) : -7.0f));
      CHECK(stored[size_t(j)] == (j < n ? float(j + 1) : 99.0f));
      CHECK(copied[size_t(j)] == (j < n ? float(j + 1) : 99.0f));
    }
  }
}

TEST_CASE("lanes: eight lanes load up to 8 floats padded with 0 and store only those") {
  std::array<float, 8> source{}, multiplier{};
  for (int j = 0; j < 8; ++j) {
    source[size_t(j)] = float(j + 1);
    multiplier[size_t(j)] = float(10 * (j + 1));
  }
  const float scalar = 0.5f;
  for (Eigen::Index n = 0; n <= 8; ++n) {
    CAPTURE(n);
    std::array<float, 8> stored;
    stored.fill(99.0f);
    lanes::store_eight(stored.data(), lanes::load_eight(source.data(), n), n);
    // a · x[0] + c over all 8 lanes, then the first n stored: the padding stays out.
    std::array<float, 8> fused;
    fused.fill(99.0f);
    lanes::store_eight(fused.data(),
                       lanes::multiply_add(lanes::load_eight(multiplier.data(), 8), &scalar,
                                           lanes::load_eight(source.data(), n)),
                       n);
    std::array<float, 8> all{};
    lanes::store_eight(all.data(), lanes::load_eight(source.data(), n), 8);
    for (Eigen::Index j = 0; j < 8; ++j) {
      CHECK(stored[size_t(j)] == (j < n ? float(j + 1) : 99.0f));
      CHECK(fused[size_t(j)] == (j < n ? float(j + 1) + 0.5f * float(10 * (j + 1)) : 99.0f));
      CHECK(all[size_t(j)] == (j < n ? float(j + 1) : 0.0f));
    }
  }
  std::array<float, 8> zeros;
  zeros.fill(5.0f);
  lanes::store_eight(zeros.data(), lanes::zero_eight(), 8);
  for (float z : zeros) CHECK(z == 0.0f);
}

TEST_CASE("lanes: halves come from and go to two places") {
  std::array<float, 8> low{}, high{};
  for (int j = 0; j < 8; ++j) {
    low[size_t(j)] = float(j);
    high[size_t(j)] = float(100 + j);
  }
  const std::array<float, 16> joined = to_array(lanes::load_halves(low.data(), high.data()));
  for (int j = 0; j < 16; ++j) CHECK(joined[size_t(j)] == (j < 8 ? float(j) : float(100 + j - 8)));
  std::array<float, 8> low_out{}, high_out{};
  lanes::store_halves(low_out.data(), high_out.data(), lanes::load(joined.data()));
  CHECK(low_out == low);
  CHECK(high_out == high);
}

TEST_CASE("lanes: a column is every stride-th float") {
  std::array<float, 16 * 5> matrix{};
  for (size_t i = 0; i < matrix.size(); ++i) matrix[i] = float(i);
  const std::array<float, 16> column = to_array(lanes::load_column(matrix.data() + 2, 5));
  for (int j = 0; j < 16; ++j) CHECK(column[size_t(j)] == float(j * 5 + 2));
  const std::array<float, 16> partial =
      to_array(lanes::load_column_partial(matrix.data() + 4, 5, 3));
  for (int j = 0; j < 16; ++j) CHECK(partial[size_t(j)] == (j < 3 ? float(j * 5 + 4) : 0.0f));
}

// The weighted sum over groups of keys (core/engine/attention.cpp): kKeys weights repeated across
// the lanes, a (kKeys, 16 / kKeys) block of values transposed, and lanes added in adjacent pairs.
template <int kKeys>
void check_key_groups() {
  CAPTURE(kKeys);
  std::array<float, 16> source{};
  for (int j = 0; j < 16; ++j) source[size_t(j)] = float(j + 1);
  const std::array<float, 16> repeated = to_array(lanes::broadcast_keys<kKeys>(source.data()));
  for (int l = 0; l < 16; ++l) CHECK(repeated[size_t(l)] == float(l % kKeys + 1));
  for (int n = 0; n < kKeys; ++n) {
    CAPTURE(n);
    const std::array<float, 16> partial =
        to_array(lanes::broadcast_keys_partial<kKeys>(source.data(), n));
    for (int l = 0; l < 16; ++l)
      CHECK(partial[size_t(l)] == (l % kKeys < n ? float(l % kKeys + 1) : 0.0f));
  }
  // source as a (kKeys, 16 / kKeys) matrix: entry (r, c) = r·(16 / kKeys) + c + 1, at lane c·kKeys
  // + r after.
  constexpr int kCols = 16 / kKeys;
  const std::array<float, 16> transposed =
      to_array(lanes::transpose<kKeys>(lanes::load(source.data())));
  for (int r = 0; r < kKeys; ++r)
    for (int c = 0; c < kCols; ++c)
      CHECK(transposed[size_t(c * kKeys + r)] == float(r * kCols + c + 1));
}

TEST_CASE("lanes: keys repeated across the lanes and a block of values transposed") {
  check_key_groups<2>();
  check_key_groups<4>();
  check_key_groups<8>();
  check_key_groups<16>();
}

TEST_CASE(
    "lanes: adjacent lanes added in pairs fill the low half from a and the high half from b") {
  std::array<float, 16> a{}, b{};
  for (int j = 0; j < 16; ++j) {
    a[size_t(j)] = float(j * j);
    b[size_t(j)] = float(1000 + 3 * j);
  }
  const std::array<float, 16> pairs =
      to_array(lanes::add_adjacent_pairs(lanes::load(a.data()), lanes::load(b.data())));
  for (int m = 0; m < 8; ++m) {
    CHECK(pairs[size_t(m)] == a[size_t(2 * m)] + a[size_t(2 * m + 1)]);
    CHECK(pairs[size_t(8 + m)] == b[size_t(2 * m)] + b[size_t(2 * m + 1)]);
  }
}

TEST_CASE("lanes: tanh is within 2e-6 of std::tanh from -20 to 20 and odd") {
  double worst = 0;
  std::array<float, 16> x{};
  for (int step = 0; step < 4000; step += 16) {
    for (int l = 0; l < 16; ++l) x[size_t(l)] = -20.0f + 40.0f * float(step + l) / 4000.0f;
    const std::array<float, 16> y = to_array(lanes::tanh(lanes::load(x.data())));
    const std::array<float, 16> minus_y =
        to_array(lanes::tanh(lanes::broadcast(0.0f) - lanes::load(x.data())));
    for (int l = 0; l < 16; ++l) {
      worst = std::max(worst, std::abs(double(y[size_t(l)]) - std::tanh(double(x[size_t(l)]))));
      CHECK(minus_y[size_t(l)] == -y[size_t(l)]);
    }
  }
  for (float tiny : {0.0f, 1e-30f, -3e-5f})
    CHECK(to_array(lanes::tanh(lanes::broadcast(tiny)))[0] == doctest::Approx(tiny));
  MESSAGE("tanh: max |Δ| against std::tanh " << worst);
  CHECK(worst < 2e-6);
  CHECK(to_array(lanes::tanh(lanes::broadcast(3e38f)))[0] == doctest::Approx(1.0f));
}

TEST_CASE("lanes: masking from a lane and where a flag is 0") {
  const Lanes ones = lanes::broadcast(1.0f);
  for (Eigen::Index first : {-3, 0, 1, 9, 15, 16, 40}) {
    CAPTURE(first);
    const std::array<float, 16> masked = to_array(lanes::set_from_lane(ones, first, -kInf));
    for (Eigen::Index j = 0; j < kLanes; ++j)
      CHECK(masked[size_t(j)] == (j >= first ? -kInf : 1.0f));
  }
  std::array<std::uint8_t, 16> flags{};
  for (int j = 0; j < 16; ++j) flags[size_t(j)] = j % 3 == 0 ? 0 : 1;
  const std::array<float, 16> masked =
      to_array(lanes::set_where_zero(ones, flags.data(), 10, -kInf));
  for (int j = 0; j < 16; ++j) CHECK(masked[size_t(j)] == (j < 10 && j % 3 == 0 ? -kInf : 1.0f));
}

TEST_CASE("lanes: sixteen rows reduced at once give each row's sum and largest in its lane") {
  std::mt19937 random(5);
  std::uniform_real_distribution<float> value(-100.0f, 100.0f);
  std::array<Lanes, 16> rows;
  std::array<std::array<float, 16>, 16> values;
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) values[size_t(i)][size_t(j)] = value(random);
    rows[size_t(i)] = lanes::load(values[size_t(i)].data());
  }
  values[3][7] = -kInf;  // a masked score counts for nothing in the largest
  rows[3] = lanes::load(values[3].data());
  const std::array<float, 16> sums = to_array(lanes::reduce_sums(rows.data()));
  const std::array<float, 16> maxima = to_array(lanes::reduce_maxima(rows.data()));
  for (int i = 0; i < 16; ++i) {
    CAPTURE(i);
    double sum = 0;
    float maximum = -kInf;
    for (int j = 0; j < 16; ++j) {
      sum += values[size_t(i)][size_t(j)];
      maximum = std::max(maximum, values[size_t(i)][size_t(j)]);
    }
    if (i == 3)
      CHECK(std::isinf(sums[size_t(i)]));
    else
      CHECK(std::abs(sums[size_t(i)] - sum) < 1e-3);
    CHECK(maxima[size_t(i)] == maximum);
    CHECK(lanes::reduce_max(rows[size_t(i)]) == maximum);
  }
}

// The exponent t = x·log2 e is rounded to float, so the relative error grows with |x|: 2^t is off
// by t's rounding, up to 2^-24·|t| (1e-7 at x = -1, 4e-6 at x = -87, where e^x is 1.6e-38). In
// absolute terms, which is what a weight of a softmax row (whose sum is >= 1) sees, it is under
// 1e-7 (one float step at 1 is 1.2e-7).
TEST_CASE("lanes: e^x of x <= 0 is within 1e-7 times 1 + |x| relative and exactly 0 below -87") {
  double worst_scaled = 0, worst_absolute = 0;
  for (int k = 0; k <= 87000; ++k) {
    std::array<float, 16> x{};
    for (int j = 0; j < 16; ++j) x[size_t(j)] = -float(k) * 1e-3f - float(j) * 6e-5f;
    const std::array<float, 16> e = to_array(lanes::exp_of_nonpositive(lanes::load(x.data())));
    for (int j = 0; j < 16; ++j) {
      const double expected = std::exp(double(x[size_t(j)]));
      if (x[size_t(j)] < -87.0f) {
        CHECK(e[size_t(j)] == 0.0f);
        continue;
      }
      const double error = std::abs(double(e[size_t(j)]) - expected);
      worst_absolute = std::max(worst_absolute, error);
      worst_scaled = std::max(worst_scaled, error / expected / (1.0 - double(x[size_t(j)])));
    }
  }
  MESSAGE("exp over [-87, 0]: max relative error / (1 + |x|) "
          << worst_scaled << ", max absolute error " << worst_absolute);
  CHECK(worst_scaled < 1e-7);
  CHECK(worst_absolute < 1e-7);
  std::array<float, 16> special{};
  special.fill(-kInf);
  special[1] = -87.5f;
  special[2] = -1000.0f;
  special[3] = 0.0f;
  const std::array<float, 16> e = to_array(lanes::exp_of_nonpositive(lanes::load(special.data())));
  CHECK(e[0] == 0.0f);
  CHECK(e[1] == 0.0f);
  CHECK(e[2] == 0.0f);
  CHECK(e[3] == 1.0f);
  for (float v : e) CHECK(std::fpclassify(v) != FP_SUBNORMAL);
}

TEST_CASE("all_finite of a run of floats finds one bad value wherever it is") {
  std::vector<float> values(201, 1.5f);
  for (Eigen::Index count : {1, 15, 16, 17, 63, 64, 65, 130, 200}) {
    CAPTURE(count);
    CHECK(all_finite(values.data(), count));
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf}) {
      for (Eigen::Index at : {Eigen::Index(0), count / 2, count - 1}) {
        CAPTURE(at);
        values[size_t(at)] = bad;
        CHECK_FALSE(all_finite(values.data(), count));
        values[size_t(at)] = 1.5f;
      }
    }
    values[size_t(count)] = kInf;  // just past the end: not looked at
    CHECK(all_finite(values.data(), count));
    values[size_t(count)] = 1.5f;
  }
}

TEST_CASE("all_finite of the largest finite floats is true") {
  // all_finite sums x · 0, which is 0 for any finite x, however large.
  std::vector<float> values(100, std::numeric_limits<float>::max());
  for (size_t i = 0; i < values.size(); i += 2) values[i] = -std::numeric_limits<float>::max();
  CHECK(all_finite(values.data(), Eigen::Index(values.size())));
  values[37] = std::numeric_limits<float>::denorm_min();
  CHECK(all_finite(values.data(), Eigen::Index(values.size())));
}

}  // namespace
}  // namespace attnviz
