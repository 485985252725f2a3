// Leader election policies and Kafka's other leader selectors (see election_policy.h). The
// failover policies share one skeleton: an online partition keeps its leader; a partition with
// no assigned replica, or no eligible one, is offline; otherwise the policy's choice.
#include "core/cluster/election_policy.h"

#include <algorithm>

#include "core/base/text.h"

namespace ksim {
namespace {

std::vector<BrokerId> Live(const std::vector<BrokerId>& brokers, const std::set<BrokerId>& live) {
  std::vector<BrokerId> out;
  for (BrokerId broker : brokers) {
    if (live.contains(broker)) out.push_back(broker);
  }
  return out;
}

std::string FormatSet(const std::set<BrokerId>& brokers) {
  return JoinIds(std::vector<BrokerId>(brokers.begin(), brokers.end()));
}

ElectionResult Elected(const ElectionInput& input, BrokerId leader, std::vector<BrokerId> isr,
                       bool unclean, std::string explanation) {
  KSIM_CHECK(input.live_brokers.contains(leader));
  KSIM_CHECK(Contains(isr, leader));
  ElectionResult result;
  result.outcome = ElectionOutcome::kElected;
  result.leader = leader;
  result.isr = std::move(isr);
  result.unclean = unclean;
  result.recipients = Live(input.assigned_replicas, input.live_brokers);
  result.explanation = std::move(explanation);
  return result;
}

ElectionResult Offline(const ElectionInput& input, std::string explanation) {
  ElectionResult result;
  result.outcome = ElectionOutcome::kOffline;
  result.isr = input.isr;  // the stored ISR stays: it says who may lead when back
  result.recipients = Live(input.assigned_replicas, input.live_brokers);
  result.explanation = std::move(explanation);
  return result;
}

ElectionResult Unchanged(const ElectionInput& input, std::string explanation) {
  KSIM_CHECK(input.current_leader.has_value());
  ElectionResult result;
  result.outcome = ElectionOutcome::kUnchanged;
  result.leader = input.current_leader;
  result.isr = input.isr;
  result.recipients = Live(input.assigned_replicas, input.live_brokers);
  result.explanation = std::move(explanation);
  return result;
}

ElectionResult Refused(const ElectionInput& input, std::string explanation) {
  ElectionResult result;
  result.outcome = ElectionOutcome::kRefused;
  result.leader = input.current_leader;
  result.isr = input.isr;
  result.explanation = std::move(explanation);
  return result;
}

std::string NoLiveIsrMessage(const ElectionInput& input) {
  return "No broker in ISR for partition " + input.partition + " is alive. Live brokers are: [" +
         FormatSet(input.live_brokers) + "]. ISR brokers are: [" + JoinIds(input.isr) + "]";
}

// Kafka's clean choice: the first live assigned replica that is in the live ISR; the new ISR is
// the live ISR (in ISR order). nullopt when no assigned replica is live and in the ISR.
std::optional<ElectionResult> ElectFromLiveIsr(const ElectionInput& input) {
  const std::vector<BrokerId> live_isr = Live(input.isr, input.live_brokers);
  for (BrokerId replica : input.assigned_replicas) {
    if (input.live_brokers.contains(replica) && Contains(live_isr, replica)) {
      return Elected(input, replica, live_isr, /*unclean=*/false,
                     "Some broker in ISR is alive for " + input.partition + ". Select " +
                         ToString(replica) + " from ISR " + JoinIds(live_isr) +
                         " to be the leader.");
    }
  }
  return std::nullopt;
}

// A leader elected from outside the ISR (or from a reset ISR): the ISR becomes just the leader.
ElectionResult ElectWithIsrReset(const ElectionInput& input, BrokerId leader, bool unclean,
                                 std::string explanation) {
  return Elected(input, leader, {leader}, unclean, std::move(explanation));
}

class FailoverPolicy : public ElectionPolicy {
 public:
  ElectionResult Elect(const ElectionInput& input) const final {
    if (input.assigned_replicas.empty()) {
      return Offline(input,
                     "Partition " + input.partition + " doesn't have replicas assigned to it");
    }
    if (input.current_leader && input.live_brokers.contains(*input.current_leader) &&
        Contains(input.isr, *input.current_leader)) {
      return Unchanged(input, "Leader " + ToString(*input.current_leader) + " of " +
                                  input.partition + " is alive: no election needed");
    }
    if (Live(input.assigned_replicas, input.live_brokers).empty()) {
      return Offline(input, "No replica for partition " + input.partition +
                                " is alive. Live brokers are: [" + FormatSet(input.live_brokers) +
                                "]. Assigned replicas are: [" + JoinIds(input.assigned_replicas) +
                                "].");
    }
    ElectionResult result = Choose(input);
    KSIM_CHECK(result.outcome == ElectionOutcome::kElected ||
               result.outcome == ElectionOutcome::kOffline);
    KSIM_CHECK(result.has_leader() == (result.outcome == ElectionOutcome::kElected));
    return result;
  }

 protected:
  // Elects among live replicas; at least one assigned replica is live, the leader is not.
  virtual ElectionResult Choose(const ElectionInput& input) const = 0;
};

class CleanPolicy final : public FailoverPolicy {
 public:
  std::string_view name() const override { return "clean"; }
  ElectionResult Choose(const ElectionInput& input) const override {
    if (auto elected = ElectFromLiveIsr(input)) return *std::move(elected);
    return Offline(input, NoLiveIsrMessage(input));
  }
};

class UncleanPolicy final : public FailoverPolicy {
 public:
  std::string_view name() const override { return "unclean"; }
  ElectionResult Choose(const ElectionInput& input) const override {
    if (auto elected = ElectFromLiveIsr(input)) return *std::move(elected);
    const std::vector<BrokerId> live_assigned = Live(input.assigned_replicas, input.live_brokers);
    const BrokerId leader = live_assigned.front();
    return ElectWithIsrReset(input, leader, /*unclean=*/true,
                             "No broker in ISR is alive for " + input.partition +
                                 ". Elect leader " + ToString(leader) + " from live brokers " +
                                 JoinIds(live_assigned) + ". There's potential data loss.");
  }
};

class RandomIsrPolicy final : public FailoverPolicy {
 public:
  std::string_view name() const override { return "random-isr"; }
  ElectionResult Choose(const ElectionInput& input) const override {
    KSIM_CHECK_MSG(input.random != nullptr, "random-isr needs ElectionInput::random");
    // Candidates in assignment order, so that one draw gives one broker whatever the ISR order.
    std::vector<BrokerId> candidates;
    for (BrokerId replica : input.assigned_replicas) {
      if (input.live_brokers.contains(replica) && Contains(input.isr, replica)) {
        candidates.push_back(replica);
      }
    }
    if (candidates.empty()) return Offline(input, NoLiveIsrMessage(input));
    const int32_t index = input.random->NextInt(static_cast<int32_t>(candidates.size()));
    KSIM_CHECK(index >= 0 && index < static_cast<int32_t>(candidates.size()));
    const BrokerId leader = candidates[index];
    return Elected(input, leader, Live(input.isr, input.live_brokers), /*unclean=*/false,
                   "Randomly selected " + ToString(leader) + " from live ISR " +
                       JoinIds(candidates) + " of " + input.partition);
  }
};

class LongestLogPolicy final : public FailoverPolicy {
 public:
  std::string_view name() const override { return "longest-log"; }
  ElectionResult Choose(const ElectionInput& input) const override {
    std::optional<BrokerId> best;
    Offset best_leo;
    for (BrokerId replica : input.assigned_replicas) {
      if (!input.live_brokers.contains(replica)) continue;
      const auto leo = input.log_end_offsets.find(replica);
      KSIM_CHECK_MSG(leo != input.log_end_offsets.end(),
                     "longest-log needs the log end offset of every live assigned replica");
      if (!best || leo->second > best_leo) {  // strictly greater: ties keep assignment order
        best = replica;
        best_leo = leo->second;
      }
    }
    KSIM_CHECK(best.has_value());
    const std::string why = "Replica " + ToString(*best) + " has the longest log (end offset " +
                            ToString(best_leo) + ") among live replicas of " + input.partition;
    if (Contains(input.isr, *best)) {
      return Elected(input, *best, Live(input.isr, input.live_brokers), /*unclean=*/false, why);
    }
    return ElectWithIsrReset(input, *best, /*unclean=*/true,
                             why + ", outside the ISR. There's potential data loss.");
  }
};

class WaitForLastIsrPolicy final : public FailoverPolicy {
 public:
  std::string_view name() const override { return "wait-for-last-isr"; }
  ElectionResult Choose(const ElectionInput& input) const override {
    if (!input.last_isr_member) {
      if (auto elected = ElectFromLiveIsr(input)) return *std::move(elected);
      return Offline(input, NoLiveIsrMessage(input));
    }
    const BrokerId last = *input.last_isr_member;
    if (!input.live_brokers.contains(last) || !Contains(input.assigned_replicas, last)) {
      return Offline(input, "Waiting for " + ToString(last) + ", the last ISR member of " +
                                input.partition + " to fail, to come back. Live brokers are: [" +
                                FormatSet(input.live_brokers) + "]");
    }
    return ElectWithIsrReset(input, last, /*unclean=*/false,
                             "The last ISR member " + ToString(last) + " of " + input.partition +
                                 " is back: it becomes the leader");
  }
};

}  // namespace

const std::vector<std::string_view>& ElectionPolicyNames() {
  static const std::vector<std::string_view> kNames = {"clean", "unclean", "random-isr",
                                                       "longest-log", "wait-for-last-isr"};
  return kNames;
}

Result<std::unique_ptr<ElectionPolicy>> MakeElectionPolicy(std::string_view name) {
  std::unique_ptr<ElectionPolicy> policy;
  if (name == "clean") policy = std::make_unique<CleanPolicy>();
  if (name == "unclean") policy = std::make_unique<UncleanPolicy>();
  if (name == "random-isr") policy = std::make_unique<RandomIsrPolicy>();
  if (name == "longest-log") policy = std::make_unique<LongestLogPolicy>();
  if (name == "wait-for-last-isr") policy = std::make_unique<WaitForLastIsrPolicy>();
  if (policy) {
    KSIM_CHECK(policy->name() == name);
    return policy;
  }
  std::string valid;
  for (std::string_view known : ElectionPolicyNames()) {
    if (!valid.empty()) valid += ", ";
    valid += known;
  }
  return Status(Errc::kInvalidArgument,
                "unknown election policy '" + std::string(name) + "'; valid policies: " + valid);
}

std::string_view KafkaElectionPolicyName(bool unclean_leader_election_enable) {
  return unclean_leader_election_enable ? "unclean" : "clean";
}

ElectionResult InitialLeaderAndIsr(const ElectionInput& input) {
  const std::vector<BrokerId> live_assigned = Live(input.assigned_replicas, input.live_brokers);
  if (live_assigned.empty()) {
    return Offline(input, "Encountered error during state change of partition " + input.partition +
                              " from New to Online, assigned replicas are [" +
                              JoinIds(input.assigned_replicas) + "], live brokers are [" +
                              FormatSet(input.live_brokers) + "]. No assigned replica is alive.");
  }
  return Elected(input, live_assigned.front(), live_assigned, /*unclean=*/false,
                 "Initialized leader " + ToString(live_assigned.front()) + " and ISR " +
                     JoinIds(live_assigned) + " for new partition " + input.partition);
}

ElectionResult SelectControlledShutdownLeader(const ElectionInput& input,
                                              const std::set<BrokerId>& shutting_down) {
  std::set<BrokerId> live_or_shutting_down = input.live_brokers;
  live_or_shutting_down.insert(shutting_down.begin(), shutting_down.end());
  std::vector<BrokerId> new_isr;
  for (BrokerId member : input.isr) {
    if (!shutting_down.contains(member)) new_isr.push_back(member);
  }
  for (BrokerId replica : input.assigned_replicas) {
    if (live_or_shutting_down.contains(replica) && Contains(new_isr, replica)) {
      ElectionResult result;
      result.outcome = ElectionOutcome::kElected;
      result.leader = replica;
      result.isr = new_isr;
      result.recipients = Live(input.assigned_replicas, live_or_shutting_down);
      result.explanation = "Partition " + input.partition + " : current leader = " +
                           (input.current_leader ? ToString(*input.current_leader) : "-1") +
                           ", new leader = " + ToString(replica);
      return result;
    }
  }
  return Refused(input, "No other replicas in ISR " + JoinIds(input.isr) + " for " +
                            input.partition + " besides shutting down brokers " +
                            FormatSet(shutting_down));
}

ElectionResult SelectPreferredReplicaLeader(const ElectionInput& input) {
  KSIM_CHECK(!input.assigned_replicas.empty());
  const BrokerId preferred = input.assigned_replicas.front();
  if (input.current_leader == preferred) {
    ElectionResult result =
        Refused(input, "Preferred replica " + ToString(preferred) +
                           " is already the current leader for partition " + input.partition);
    result.outcome = ElectionOutcome::kUnchanged;
    return result;
  }
  if (input.live_brokers.contains(preferred) && Contains(input.isr, preferred)) {
    ElectionResult result;
    result.outcome = ElectionOutcome::kElected;
    result.leader = preferred;
    result.isr = input.isr;
    result.recipients = input.assigned_replicas;
    result.explanation = "Current leader " +
                         (input.current_leader ? ToString(*input.current_leader) : "-1") +
                         " for partition " + input.partition +
                         " is not the preferred replica. Triggering preferred replica leader "
                         "election";
    return result;
  }
  return Refused(input, "Preferred replica " + ToString(preferred) + " for partition " +
                            input.partition +
                            " is either not alive or not in the isr. Current "
                            "leader and ISR: [" +
                            (input.current_leader ? ToString(*input.current_leader) : "-1") + "," +
                            JoinIds(input.isr) + "]");
}

ElectionResult SelectReassignedPartitionLeader(const ElectionInput& input,
                                               const std::vector<BrokerId>& reassigned_replicas) {
  for (BrokerId replica : reassigned_replicas) {
    if (input.live_brokers.contains(replica) && Contains(input.isr, replica)) {
      ElectionResult result;
      result.outcome = ElectionOutcome::kElected;
      result.leader = replica;
      result.isr = input.isr;
      result.recipients = reassigned_replicas;
      result.explanation = "Reassigned replica " + ToString(replica) + " leads " + input.partition;
      return result;
    }
  }
  if (reassigned_replicas.empty()) {
    return Refused(input, "List of reassigned replicas for partition " + input.partition +
                              " is empty. Current leader and ISR: [" + JoinIds(input.isr) + "]");
  }
  return Refused(input, "None of the reassigned replicas for partition " + input.partition +
                            " are in-sync with the leader. Current leader and ISR: [" +
                            JoinIds(input.isr) + "]");
}

}  // namespace ksim
