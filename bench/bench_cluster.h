// The cluster the cluster and serve benchmarks run on (not timed by them): a World whose trace
// is only hashed, with 1-3 ms links; 3 brokers started, a controller elected and every broker
// registered; topic t with one partition on brokers 1, 2, 3.
#pragma once

#include <memory>
#include <string>

#include "core/base/check.h"
#include "sim/cluster/cluster.h"
#include "sim/kernel/trace.h"
#include "sim/world/world.h"

namespace ksim::sim {

struct BenchCluster {
  std::unique_ptr<World> world;
  std::unique_ptr<Cluster> cluster;
};

inline BenchCluster StartBenchCluster(const std::string& scenario) {
  constexpr TimeUs kSecondUs = 1'000'000;
  TraceHeader header;
  header.scenario = scenario;
  header.seed = 1;
  BenchCluster b;
  b.world = std::make_unique<World>(1, TraceWriter::HashOnly(header),
                                    WorldOptions{LinkSpec{1000, 3000, 0, 0}, NetworkOptions{}});
  ClusterOptions options;
  options.brokers = 3;
  Result<std::unique_ptr<Cluster>> created = Cluster::Create(*b.world, options);
  KSIM_CHECK(created.ok());
  b.cluster = std::move(created).value();
  Cluster& cluster = *b.cluster;
  KSIM_CHECK(cluster.Start().ok());
  KSIM_CHECK(cluster.RunUntil(
      [&] {
        return cluster.ActiveController() != kNoBroker &&
               cluster.zookeeper().Children("/brokers/ids").size() == 3;
      },
      30 * kSecondUs));
  TopicSpec topic{"t", 1, 3, {{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}}}, {}};
  KSIM_CHECK(cluster.CreateTopicAndWait(topic).ok());
  return b;
}

}  // namespace ksim::sim
