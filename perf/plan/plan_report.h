// What `mcl-perf plan` prints: the layouts as a table (or one JSON object
// with --json), the verdict, and how to start the chosen layout with
// mlx.launch, torchrun and mcl's own variables.
#pragma once

#include <string>
#include <vector>

#include "plan/cluster_figures.h"
#include "plan/layouts.h"
#include "plan/model_shape.h"

namespace mcl::perf::plan {

std::string planTable(const ModelShape& m, const ClusterFigures& c,
                      const PlanInputs& in, const std::vector<Layout>& all);

std::string planJson(const ModelShape& m, const ClusterFigures& c,
                     const PlanInputs& in, const std::vector<Layout>& all);

// The hosts a layout runs on, in rank order.
std::vector<std::string> layoutHosts(const Layout& l, const ClusterFigures& c);

}  // namespace mcl::perf::plan
