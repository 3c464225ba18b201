#include "core/engine/parameters.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <vector>

namespace attnviz {
namespace {

AttentionConfig small_config() {
  AttentionConfig config;
  config.d_model = 6;
  config.heads = 2;
  config.d_k = 3;
  config.d_v = 2;
  config.d_att = 4;
  return config;
}

}  // namespace

TEST_CASE("seeded parameters have the configured shapes") {
  const AttentionConfig config = small_config();
  const Parameters p = seeded_parameters(config, 1);
  CHECK(check_parameters(p, config).is_ok());
  CHECK(p.heads[1].W_V.rows() == 6);
  CHECK(p.heads[1].W_V.cols() == 2);
  CHECK(p.heads[0].v_a.cols() == 4);
  CHECK(p.W_O.rows() == 4);
  CHECK(p.W_O.cols() == 6);
}

TEST_CASE("the same seed gives the same parameters, another seed different ones") {
  const AttentionConfig config = small_config();
  CHECK(seeded_parameters(config, 3).heads[1].W_K == seeded_parameters(config, 3).heads[1].W_K);
  CHECK(seeded_parameters(config, 3).heads[1].W_K != seeded_parameters(config, 4).heads[1].W_K);
}

TEST_CASE("heads and matrices draw independent numbers") {
  const Parameters p = seeded_parameters(small_config(), 3);
  CHECK(p.heads[0].W_Q != p.heads[1].W_Q);
  CHECK(p.heads[0].W_Q != p.heads[0].W_K);
}

TEST_CASE("seeded values have standard deviation near 1/sqrt(fan_in)") {
  AttentionConfig config;
  config.d_model = 256;
  config.heads = 1;
  config.d_k = 256;
  const Parameters p = seeded_parameters(config, 9);
  const Matrix& W = p.heads[0].W_Q;
  const double variance = W.cast<double>().array().square().mean();
  CHECK(std::sqrt(variance) == doctest::Approx(1.0 / 16.0).epsilon(0.05));
}

TEST_CASE("reshaping keeps every existing value and seeds only the new cells") {
  AttentionConfig config = small_config();
  Parameters p = seeded_parameters(config, 5);
  p.heads[0].W_Q(1, 2) = 42.0f;  // a user's edit
  const Matrix before = p.heads[0].W_Q;
  config.d_model = 8;
  config.heads = 3;
  config.d_k = 4;
  reshape_parameters(p, config, 5);
  CHECK(check_parameters(p, config).is_ok());
  CHECK(p.heads[0].W_Q.topLeftCorner(6, 3) == before);
  CHECK(p.heads[0].W_Q(7, 3) == seeded_value(5, ParameterName::W_Q, 0, 7, 3, 8));
  CHECK(p.heads[2].W_Q == seeded_parameters(config, 5).heads[2].W_Q);
}

TEST_CASE("shrinking keeps the overlapping values") {
  AttentionConfig config = small_config();
  Parameters p = seeded_parameters(config, 5);
  const Matrix before = p.heads[1].W_V;
  config.d_model = 4;
  config.heads = 2;
  reshape_parameters(p, config, 5);
  CHECK(p.heads[1].W_V == before.topRows(4));
}

TEST_CASE("a NaN weight is reported with its head and cell") {
  const AttentionConfig config = small_config();
  Parameters p = seeded_parameters(config, 1);
  p.heads[1].W_Q(3, 2) = std::numeric_limits<float>::quiet_NaN();
  CHECK(check_parameters(p, config).message() ==
        "W_Q[1][3][2] is NaN: weights must be finite numbers");
}

TEST_CASE("an infinite weight in W_O or v_a is reported") {
  const AttentionConfig config = small_config();
  Parameters p = seeded_parameters(config, 1);
  p.W_O(0, 1) = -std::numeric_limits<float>::infinity();
  CHECK(check_parameters(p, config).message().rfind("W_O[0][1] is -infinity", 0) == 0);
  p = seeded_parameters(config, 1);
  p.heads[0].v_a[2] = std::numeric_limits<float>::infinity();
  CHECK(check_parameters(p, config).message().rfind("v_a[0][2] is +infinity", 0) == 0);
}

TEST_CASE("checking the used values but the projections' skips W_Q W_K and W_V values") {
  const AttentionConfig config = small_config();
  Parameters p = seeded_parameters(config, 1);
  p.heads[1].W_Q(3, 2) = std::numeric_limits<float>::quiet_NaN();
  p.heads[0].W_K(0, 0) = std::numeric_limits<float>::infinity();
  p.heads[1].W_V(1, 1) = -std::numeric_limits<float>::infinity();
  CHECK(check_parameters(p, config, ValueCheck::UsedExceptProjections).is_ok());
  CHECK(check_parameters(p, config, ValueCheck::Used).message() ==
        "W_Q[1][3][2] is NaN: weights must be finite numbers");
  CHECK(check_parameters(p, config).message() ==
        "W_Q[1][3][2] is NaN: weights must be finite numbers");
  p.W_O(0, 1) = std::numeric_limits<float>::quiet_NaN();
  CHECK(check_parameters(p, config, ValueCheck::UsedExceptProjections)
            .message()
            .rfind("W_O[0][1] is NaN", 0) == 0);
  p = seeded_parameters(config, 1);
  p.heads[0].W_V.resize(2, 2);
  CHECK(check_parameters(p, config, ValueCheck::UsedExceptProjections)
            .message()
            .rfind("W_V[0] is 2x2, expected", 0) == 0);
}

TEST_CASE("a parameter the compatibility function does not use is checked for values only by All") {
  AttentionConfig config = small_config();
  Parameters p = seeded_parameters(config, 1);
  p.heads[1].W_a(0, 0) = std::numeric_limits<float>::quiet_NaN();
  p.heads[0].v_a[1] = std::numeric_limits<float>::infinity();
  for (Compatibility unused :
       {Compatibility::Dot, Compatibility::ScaledDot, Compatibility::Cosine}) {
    config.compatibility = unused;
    CHECK(check_parameters(p, config, ValueCheck::Used).is_ok());
    CHECK(check_parameters(p, config, ValueCheck::UsedExceptProjections).is_ok());
    CHECK(check_parameters(p, config).message().rfind("W_a[1][0][0] is NaN", 0) == 0);
  }
  config.compatibility = Compatibility::General;
  CHECK(check_parameters(p, config, ValueCheck::Used).message().rfind("W_a[1][0][0] is NaN", 0) ==
        0);
  config.compatibility = Compatibility::Additive;
  CHECK(check_parameters(p, config, ValueCheck::UsedExceptProjections)
            .message()
            .rfind("v_a[0][1] is +infinity", 0) == 0);
  // Shapes are checked whether a parameter is used or not.
  config.compatibility = Compatibility::Dot;
  p = seeded_parameters(config, 1);
  p.heads[0].W_2.resize(1, 1);
  CHECK(
      check_parameters(p, config, ValueCheck::Used).message().rfind("W_2[0] is 1x1, expected", 0) ==
      0);
}

TEST_CASE("parameters_valid is true exactly when check_parameters finds nothing") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Compatibility compatibility :
       {Compatibility::ScaledDot, Compatibility::General, Compatibility::Additive}) {
    AttentionConfig config = small_config();
    config.compatibility = compatibility;
    const Parameters good = seeded_parameters(config, 3);
    std::vector<Parameters> cases{good};
    for (int head = 0; head < config.heads; ++head) {
      for (ParameterName name : kAllParameterNames) {
        if (name == ParameterName::W_O && head > 0) continue;  // one W_O for all heads
        Parameters bad_value = good;
        if (name == ParameterName::v_a)
          bad_value.heads[static_cast<std::size_t>(head)].v_a(0, 0) = nan;
        else
          parameter(bad_value, name, head)(0, 0) = nan;
        cases.push_back(bad_value);
        if (name == ParameterName::v_a) continue;
        Parameters bad_shape = good;
        parameter(bad_shape, name, head).resize(1, 1);
        cases.push_back(bad_shape);
      }
    }
    Parameters fewer_heads = good;
    fewer_heads.heads.pop_back();
    cases.push_back(fewer_heads);
    for (const Parameters& p : cases)
      for (const ValueCheck values :
           {ValueCheck::All, ValueCheck::Used, ValueCheck::UsedExceptProjections})
        CHECK(parameters_valid(p, config, values) == check_parameters(p, config, values).is_ok());
  }
}

TEST_CASE("a wrong shape is reported with the expected shape") {
  const AttentionConfig config = small_config();
  Parameters p = seeded_parameters(config, 1);
  p.heads[0].W_K.resize(6, 2);
  CHECK(check_parameters(p, config).message() == "W_K[0] is 6x2, expected 6x3");
}

TEST_CASE("config validation names the field") {
  AttentionConfig config;
  config.heads = 0;
  CHECK(validate(config).message().rfind("heads must be between 1 and 16", 0) == 0);
  config = AttentionConfig{};
  config.temperature = 0.0f;
  CHECK(validate(config).message().rfind("temperature", 0) == 0);
  config = AttentionConfig{};
  config.d_model = 5000;
  CHECK(validate(config).message().rfind("d_model", 0) == 0);
}

TEST_CASE("the heads side by side may be at most 1024 wide") {
  AttentionConfig config;
  config.heads = 16;
  config.d_k = config.d_v = 64;
  CHECK(validate(config).is_ok());
  config.d_k = 65;
  CHECK(validate(config).message() ==
        "heads x d_k is 16 x 65 = 1040; at most 1024 (fewer heads or a smaller d_k)");
  config.d_k = 64;
  config.d_v = 128;
  CHECK(validate(config).message().rfind("heads x d_v is 16 x 128", 0) == 0);
  config.heads = 1;
  config.d_k = config.d_v = 256;  // one wide head is allowed
  CHECK(validate(config).is_ok());
}

}  // namespace attnviz
