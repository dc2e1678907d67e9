// Helpers of the semantic-cache tests: unit vectors at a chosen cosine from a basis vector, a
// clock the test moves by hand, and random unit vectors.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "engine/semantic/unit_vector.h"

namespace inferscope::semantic::testing {

// e_axis in `dim` dimensions.
inline std::vector<float> basis(std::size_t dim, std::size_t axis) {
  std::vector<float> v(dim, 0.0f);
  v[axis] = 1.0f;
  return v;
}

// A unit vector whose cosine with basis(dim, axis) is `cosine`, leaning towards the next axis.
inline std::vector<float> at_cosine(std::size_t dim, std::size_t axis, double cosine) {
  std::vector<float> v(dim, 0.0f);
  v[axis] = static_cast<float>(cosine);
  v[(axis + 1) % dim] = static_cast<float>(std::sqrt(1.0 - cosine * cosine));
  return v;
}

inline std::vector<float> random_unit(std::mt19937& rng, std::size_t dim) {
  std::normal_distribution<float> normal;
  std::vector<float> v(dim);
  for (float& x : v) x = normal(rng);
  return to_unit_vector(v).value();
}

// A unit vector at cosine `cosine` from the unit vector `from`, in a random direction.
inline std::vector<float> random_unit_near(std::mt19937& rng, const std::vector<float>& from, double cosine) {
  std::vector<float> other = random_unit(rng, from.size());
  double along = 0.0;
  for (std::size_t i = 0; i < from.size(); ++i) along += static_cast<double>(other[i]) * from[i];
  for (std::size_t i = 0; i < from.size(); ++i) other[i] -= static_cast<float>(along * from[i]);
  other = to_unit_vector(other).value();
  const double side = std::sqrt(1.0 - cosine * cosine);
  for (std::size_t i = 0; i < from.size(); ++i) other[i] = static_cast<float>(cosine * from[i] + side * other[i]);
  return to_unit_vector(other).value();
}

// now() returns what the test last set; copies share the time.
struct ManualClock {
  std::shared_ptr<std::int64_t> now = std::make_shared<std::int64_t>(1'700'000'000'000);
  std::int64_t operator()() const { return *now; }
  void advance_ms(std::int64_t ms) const { *now += ms; }
};

}  // namespace inferscope::semantic::testing
