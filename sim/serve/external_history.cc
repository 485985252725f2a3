#include "sim/serve/external_history.h"

#include <utility>

#include "core/base/status.h"
#include "core/record/record_batch.h"

namespace ksim::sim {
namespace {

constexpr uint64_t kIncarnation = 1;  // a real client has one process as far as ksim knows

std::string Text(const std::optional<Bytes>& bytes) {
  return bytes ? std::string(AsChars(*bytes)) : std::string();
}

std::optional<std::string> OptionalText(const std::optional<Bytes>& bytes) {
  if (!bytes) return std::nullopt;
  return std::string(AsChars(*bytes));
}

// The records of every whole, well-formed batch in `records`; a batch that does not decode is
// left out (the broker refuses it, and no send of it can be in a log).
std::vector<Record> RecordsIn(const Bytes& records) {
  std::vector<Record> out;
  BatchIterator batches(records);
  while (std::optional<BatchIterator::Item> batch = batches.Next()) {
    Result<std::vector<Record>> decoded = DecodeRecords(batch->bytes);
    if (!decoded.ok()) continue;
    for (Record& record : *decoded) out.push_back(std::move(record));
  }
  return out;
}

}  // namespace

void ExternalHistory::OnRequest(std::string_view client, uint64_t request_key,
                                const ksim::Message& request) {
  Request pending;
  pending.client = std::string(client);
  if (const auto* produce = std::get_if<ProduceRequest>(&request)) {
    OnProduce(pending, *produce);
    if (produce->acks == 0) return;  // no answer will come
  } else if (const auto* fetch = std::get_if<FetchRequest>(&request)) {
    for (const FetchPartition& partition : fetch->partitions) {
      pending.fetch_offsets[partition.tp] = partition.fetch_offset;
    }
  } else if (const auto* join = std::get_if<JoinGroupRequest>(&request)) {
    group_of_[pending.client] = join->group_id;
    return;
  } else if (const auto* commit = std::get_if<OffsetCommitRequest>(&request)) {
    pending.group = commit->group_id;
    for (const OffsetCommitPartition& partition : commit->partitions) {
      pending.commit_offsets[partition.tp] = partition.offset;
    }
  } else {
    return;  // nothing of it goes into the history
  }
  requests_[request_key] = std::move(pending);
}

void ExternalHistory::OnProduce(Request& pending, const ProduceRequest& produce) {
  for (const ProducePartitionData& data : produce.topic_data) {
    std::vector<uint64_t>& sends = pending.sends[data.tp];
    for (const Record& record : RecordsIn(data.record_set)) {
      RecordKey key{pending.client, data.tp, record.timestamp_ms, OptionalText(record.key),
                    Text(record.value)};
      auto [it, first] = invoke_of_.try_emplace(std::move(key), kNoOpIndex);
      if (first) {
        it->second = history_.SendInvoke(pending.client, kIncarnation,
                                         history_.NewRecordId(pending.client), data.tp.topic,
                                         OptionalText(record.key), Text(record.value));
        open_.insert(it->second);
      }
      const uint64_t invoke = it->second;
      if (open_.count(invoke) == 0) {
        sends.push_back(kNoOpIndex);  // an earlier attempt completed it
      } else if (produce.acks == 0) {
        history_.SendOk(invoke, data.tp, kUndefinedOffset);
        open_.erase(invoke);
        sends.push_back(kNoOpIndex);
      } else {
        sends.push_back(invoke);
      }
    }
  }
}

void ExternalHistory::OnAnswer(uint64_t request_key, const ksim::Message& response) {
  auto it = requests_.find(request_key);
  if (it == requests_.end()) return;
  const Request pending = std::move(it->second);
  requests_.erase(it);
  if (const auto* produce = std::get_if<ProduceResponse>(&response)) {
    OnProduceAnswer(pending, *produce);
  } else if (const auto* fetch = std::get_if<FetchResponse>(&response)) {
    OnFetchAnswer(pending, *fetch);
  } else if (const auto* commit = std::get_if<OffsetCommitResponse>(&response)) {
    for (const PartitionError& partition : commit->responses) {
      auto offset = pending.commit_offsets.find(partition.tp);
      if (offset == pending.commit_offsets.end()) continue;
      history_.Commit(pending.client, kIncarnation, pending.group, partition.tp, offset->second,
                      partition.error_code);
    }
  }
}

void ExternalHistory::OnProduceAnswer(const Request& pending, const ProduceResponse& response) {
  for (const ProducePartitionResponse& partition : response.responses) {
    auto sends = pending.sends.find(partition.tp);
    if (sends == pending.sends.end()) continue;
    // A retriable error: the client sends the records again, so they stay open.
    if (partition.error_code != Errc::kNone && IsRetriable(partition.error_code)) continue;
    for (size_t i = 0; i < sends->second.size(); ++i) {
      const uint64_t invoke = sends->second[i];
      if (invoke == kNoOpIndex || open_.erase(invoke) == 0) continue;
      if (partition.error_code == Errc::kNone) {
        history_.SendOk(invoke, partition.tp, partition.base_offset + static_cast<int64_t>(i));
      } else {
        history_.SendFail(invoke, partition.tp, partition.error_code);
      }
    }
  }
}

void ExternalHistory::OnFetchAnswer(const Request& pending, const FetchResponse& response) {
  auto group = group_of_.find(pending.client);
  const std::string& group_id = group == group_of_.end() ? std::string() : group->second;
  for (const FetchPartitionResponse& partition : response.responses) {
    if (partition.error_code != Errc::kNone || partition.records.empty()) continue;
    auto from = pending.fetch_offsets.find(partition.tp);
    const Offset fetch_offset = from == pending.fetch_offsets.end() ? Offset(0) : from->second;
    for (const Record& record : RecordsIn(partition.records)) {
      if (record.offset < fetch_offset) continue;  // the start of a batch before the offset
      history_.Deliver(pending.client, kIncarnation, group_id, partition.tp, record.offset,
                       OptionalText(record.key), Text(record.value));
    }
  }
}

void ExternalHistory::OnLost(uint64_t request_key) { requests_.erase(request_key); }

void ExternalHistory::End() {
  requests_.clear();
  for (uint64_t invoke : open_) {
    history_.SendInfo(invoke, TopicPartition{}, Errc::kNetworkException);
  }
  open_.clear();
}

}  // namespace ksim::sim
