#include "core/storage/producer_state.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "core/base/big_endian.h"
#include "core/base/check.h"
#include "core/base/crc32c.h"
#include "core/storage/log.h"
#include "core/storage/log_segment.h"

namespace ksim {
namespace {

constexpr std::string_view kSnapshotSuffix = ".snapshot";
constexpr int16_t kSnapshotVersion = 1;
constexpr size_t kSnapshotCrcOffset = 2;
constexpr size_t kSnapshotEntriesOffset = 6;  // the CRC covers everything from here on
constexpr size_t kSnapshotEntrySize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;

// ProducerAppendInfo.inSequence: the next sequence, or 0 after INT32_MAX.
bool InSequence(Sequence last, Sequence next) {
  return int64_t{next.value()} == int64_t{last.value()} + 1 ||
         (next.value() == 0 && last.value() == std::numeric_limits<int32_t>::max());
}

std::string Describe(const BatchHeader& b) {
  return "producer " + ToString(b.producer_id) + " epoch " + ToString(b.producer_epoch) +
         " sequence " + ToString(b.base_sequence) + ".." + ToString(b.last_sequence());
}

// ProducerAppendInfo.checkProducerEpoch and checkSequence (ValidationType.Full), against the
// producer's entry as updated by the request's earlier batches.
Status CheckEpochAndSequence(const ProducerStateEntry& entry, const BatchHeader& b,
                             const ProducerStateRules& rules) {
  if (b.producer_epoch < entry.epoch) {
    // Kafka's ProducerFencedException, answered as INVALID_PRODUCER_EPOCH.
    return Status(Errc::kInvalidProducerEpoch,
                  Describe(b) + ": fenced by epoch " + ToString(entry.epoch));
  }
  if (b.producer_epoch != entry.epoch) {
    if (b.base_sequence == Sequence(0)) return Status::Ok();
    if (entry.epoch != kNoProducerEpoch) {
      return Status(Errc::kOutOfOrderSequenceNumber,
                    Describe(b) + ": a new epoch must start at sequence 0");
    }
    return Status(
        rules.unknown_producer_id ? Errc::kUnknownProducerId : Errc::kOutOfOrderSequenceNumber,
        Describe(b) +
            ": no record of the producer on this broker (its last batch may "
            "have been removed by retention)");
  }
  const Sequence last = entry.last_sequence();
  if (last == kNoSequence && b.base_sequence != Sequence(0)) {
    return Status(Errc::kOutOfOrderSequenceNumber, Describe(b) + ": expected sequence 0");
  }
  if (!InSequence(last, b.base_sequence)) {
    return Status(Errc::kOutOfOrderSequenceNumber,
                  Describe(b) + ": the last sequence appended is " + ToString(last));
  }
  return Status::Ok();
}

BatchMetadata BatchOf(const BatchHeader& b) {
  return BatchMetadata{b.base_sequence, b.last_sequence(), b.base_offset, b.last_offset(),
                       b.max_timestamp};
}

void PutInt16(Bytes& out, int16_t v) {
  const size_t at = out.size();
  out.resize(at + 2);
  StoreBigEndian16(out.data() + at, static_cast<uint16_t>(v));
}
void PutInt32(Bytes& out, int32_t v) {
  const size_t at = out.size();
  out.resize(at + 4);
  StoreBigEndian32(out.data() + at, static_cast<uint32_t>(v));
}
void PutInt64(Bytes& out, int64_t v) {
  const size_t at = out.size();
  out.resize(at + 8);
  StoreBigEndian64(out.data() + at, static_cast<uint64_t>(v));
}

Status SnapshotCorrupt(const std::string& what) {
  return Status(Errc::kCorruption, "producer snapshot: " + what);
}

}  // namespace

const BatchMetadata* ProducerStateEntry::FindBatch(ProducerEpoch batch_epoch, Sequence first,
                                                   Sequence last) const {
  if (batch_epoch != epoch) return nullptr;
  for (const BatchMetadata& b : batches) {
    if (b.first_sequence == first && b.last_sequence == last) return &b;
  }
  return nullptr;
}

void ProducerStateEntry::UpdateEpoch(ProducerEpoch new_epoch) {
  if (new_epoch == epoch) return;
  batches.clear();
  epoch = new_epoch;
}

void ProducerStateEntry::AddBatch(ProducerEpoch batch_epoch, const BatchMetadata& batch,
                                  size_t retain) {
  KSIM_CHECK(retain >= 1 && retain <= kBatchesToRetain);
  UpdateEpoch(batch_epoch);
  while (batches.size() >= retain) batches.pop_front();
  batches.push_back(batch);
}

ProducerStateRules ProducerStateRulesAt(KafkaRelease release) {
  // 0.11.0.0:core/…/log/ProducerStateManager.scala ProducerIdEntry (lastSeq, lastOffset: one
  // batch; validateAppend's OutOfOrderSequenceException for an unknown producer);
  // 1.0.0: ProducerStateEntry.NumBatchesToRetain = 5, UnknownProducerIdException.
  if (release < KafkaRelease::k1_0) return ProducerStateRules{1, false};
  return ProducerStateRules{};
}

ProducerStateManager::ProducerStateManager(Env& env, std::string dir,
                                           int64_t producer_expiration_ms, ProducerStateRules rules)
    : env_(env),
      dir_(std::move(dir)),
      producer_expiration_ms_(producer_expiration_ms),
      rules_(rules) {
  KSIM_CHECK(producer_expiration_ms_ > 0);
}

Result<AppendCheck> ProducerStateManager::ValidateAppend(
    std::span<const BatchHeader> batches) const {
  // Kafka's Log.analyzeAndValidateProducerState for a client's request: per batch, first the
  // duplicate check against the state in the log, then validation against the state as the
  // request's earlier batches leave it.
  // The request's producers as its batches leave them: one, almost always (a client's records
  // for a partition are one producer's), so looked up by a walk.
  std::vector<ProducerStateEntry> updated;
  for (const BatchHeader& b : batches) {
    if (b.producer_id == kNoProducerId || b.control()) continue;
    const ProducerStateEntry* current = LastEntry(b.producer_id);
    if (current != nullptr) {
      const BatchMetadata* duplicate =
          current->FindBatch(b.producer_epoch, b.base_sequence, b.last_sequence());
      if (duplicate != nullptr) return AppendCheck{*duplicate};
    }
    auto it = std::find_if(updated.begin(), updated.end(), [&](const ProducerStateEntry& entry) {
      return entry.producer_id == b.producer_id;
    });
    if (it == updated.end()) {
      ProducerStateEntry& start = updated.emplace_back();
      if (current != nullptr) start = *current;
      start.producer_id = b.producer_id;
      it = updated.end() - 1;
    }
    KSIM_RETURN_IF_ERROR(CheckEpochAndSequence(*it, b, rules_));
    it->AddBatch(b.producer_epoch, BatchOf(b), rules_.batches_to_retain);
  }
  return AppendCheck{};
}

void ProducerStateManager::Update(const BatchHeader& appended) {
  KSIM_CHECK(appended.base_offset >= map_end_offset_);
  map_end_offset_ = appended.next_offset();
  if (appended.producer_id == kNoProducerId) return;
  ProducerStateEntry& entry = producers_[appended.producer_id];
  entry.producer_id = appended.producer_id;
  if (appended.control()) {
    // An end-transaction marker carries no data: it only moves the epoch (appendEndTxnMarker).
    entry.UpdateEpoch(appended.producer_epoch);
    return;
  }
  entry.AddBatch(appended.producer_epoch, BatchOf(appended), rules_.batches_to_retain);
}

const ProducerStateEntry* ProducerStateManager::LastEntry(ProducerId producer_id) const {
  const auto it = producers_.find(producer_id);
  return it == producers_.end() ? nullptr : &it->second;
}

bool ProducerStateManager::Expired(const ProducerStateEntry& entry, int64_t now_ms) const {
  return now_ms - entry.last_timestamp_ms() >= producer_expiration_ms_;
}

void ProducerStateManager::RemoveExpiredProducers(int64_t now_ms) {
  std::erase_if(producers_, [&](const auto& item) { return Expired(item.second, now_ms); });
}

Status ProducerStateManager::TruncateHead(Offset log_start_offset) {
  KSIM_ASSIGN_OR_RETURN(const std::vector<Offset> snapshots, SnapshotOffsets());
  return TruncateHeadGiven(log_start_offset, snapshots);
}

Status ProducerStateManager::TruncateHeadGiven(Offset log_start_offset,
                                               const std::vector<Offset>& snapshots) {
  // Kafka's isProducerRetained: drop the batches below the log start; a producer with none left
  // is forgotten (a retried batch would then get UNKNOWN_PRODUCER_ID).
  for (auto it = producers_.begin(); it != producers_.end();) {
    RetainedBatches& batches = it->second.batches;
    while (!batches.empty() && batches.front().last_offset < log_start_offset) {
      batches.pop_front();
    }
    it = batches.empty() ? producers_.erase(it) : std::next(it);
  }
  if (map_end_offset_ < log_start_offset) map_end_offset_ = log_start_offset;
  // The snapshots below the log start go; the latest of those left (ascending: the last) is
  // the last snapshot taken.
  for (const Offset offset : snapshots) {
    if (offset < log_start_offset) KSIM_RETURN_IF_ERROR(env_.RemoveFile(SnapshotPath(offset)));
  }
  last_snapshot_offset_ = snapshots.empty() || snapshots.back() < log_start_offset
                              ? log_start_offset
                              : snapshots.back();
  return Status::Ok();
}

Status ProducerStateManager::TruncateAndReload(Offset log_start_offset, Offset log_end_offset,
                                               int64_t now_ms) {
  KSIM_CHECK(log_start_offset <= log_end_offset);
  KSIM_ASSIGN_OR_RETURN(const std::vector<Offset> offsets, SnapshotOffsets());
  std::vector<Offset> kept;  // the snapshots left, ascending
  for (const Offset offset : offsets) {
    if (offset > log_end_offset || offset <= log_start_offset) {
      KSIM_RETURN_IF_ERROR(env_.RemoveFile(SnapshotPath(offset)));
    } else {
      kept.push_back(offset);
    }
  }
  if (log_end_offset != map_end_offset_) {
    producers_.clear();
    return LoadFromSnapshot(log_start_offset, now_ms);
  }
  return TruncateHeadGiven(log_start_offset, kept);
}

Status ProducerStateManager::LoadFromSnapshot(Offset log_start_offset, int64_t now_ms) {
  while (true) {
    KSIM_ASSIGN_OR_RETURN(const std::vector<Offset> offsets, SnapshotOffsets());
    if (offsets.empty()) {
      map_end_offset_ = log_start_offset;
      last_snapshot_offset_ = log_start_offset;
      return Status::Ok();
    }
    const Offset latest = offsets.back();
    KSIM_ASSIGN_OR_RETURN(const Bytes bytes, ReadWholeFile(env_, SnapshotPath(latest)));
    Result<std::vector<ProducerStateEntry>> entries = DecodeSnapshot(bytes);
    if (!entries.ok()) {
      // Kafka logs the damage, deletes the file and falls back to the previous snapshot.
      KSIM_RETURN_IF_ERROR(env_.RemoveFile(SnapshotPath(latest)));
      continue;
    }
    for (ProducerStateEntry& entry : *entries) {
      while (!entry.batches.empty() && entry.batches.front().last_offset < log_start_offset) {
        entry.batches.pop_front();
      }
      if (entry.batches.empty() || Expired(entry, now_ms)) continue;
      producers_.emplace(entry.producer_id, std::move(entry));
    }
    map_end_offset_ = latest;
    last_snapshot_offset_ = latest;
    return Status::Ok();
  }
}

Status ProducerStateManager::RebuildFromLog(const Log& log, int64_t now_ms) {
  const Offset log_end = log.log_end_offset();
  KSIM_RETURN_IF_ERROR(TruncateAndReload(log.log_start_offset(), log_end, now_ms));
  if (map_end_offset_ >= log_end) return Status::Ok();
  const Offset from = map_end_offset_;
  KSIM_RETURN_IF_ERROR(log.ForEachBatch(from, [&](const BatchHeader& header, uint64_t) {
    // A snapshot sits on a batch boundary; a batch straddling it would already be counted.
    if (header.base_offset >= from) Update(header);
    return BatchWalk::kContinue;
  }));
  KSIM_CHECK(map_end_offset_ <= log_end);
  map_end_offset_ = log_end;
  return Status::Ok();
}

std::string ProducerStateManager::SnapshotPath(Offset offset) const {
  return JoinPath(dir_, FilenamePrefixFromOffset(offset) + std::string(kSnapshotSuffix));
}

Result<std::vector<Offset>> ProducerStateManager::SnapshotOffsets() const {
  std::vector<Offset> offsets;
  if (!env_.DirExists(dir_)) return offsets;
  KSIM_ASSIGN_OR_RETURN(const std::vector<std::string> names, env_.ListDir(dir_));
  for (const std::string& name : names) {
    if (!name.ends_with(kSnapshotSuffix)) continue;
    const std::optional<Offset> offset = OffsetFromFileName(name);
    if (offset && name.size() == 20 + kSnapshotSuffix.size()) offsets.push_back(*offset);
  }
  std::sort(offsets.begin(), offsets.end());
  return offsets;
}

Status ProducerStateManager::TakeSnapshot() {
  if (map_end_offset_ <= last_snapshot_offset_) return Status::Ok();  // nothing new
  const std::string path = SnapshotPath(map_end_offset_);
  const Bytes bytes = EncodeSnapshot(producers_);
  KSIM_ASSIGN_OR_RETURN(std::unique_ptr<File> file, env_.OpenFile(path, OpenMode::kTruncate));
  KSIM_RETURN_IF_ERROR(file->Append(bytes));
  KSIM_RETURN_IF_ERROR(file->Sync());
  KSIM_RETURN_IF_ERROR(env_.SyncDir(dir_));
  last_snapshot_offset_ = map_end_offset_;
  return Status::Ok();
}

Status ProducerStateManager::DeleteSnapshotsBefore(Offset offset) {
  KSIM_ASSIGN_OR_RETURN(const std::vector<Offset> offsets, SnapshotOffsets());
  for (const Offset o : offsets) {
    if (o < offset) KSIM_RETURN_IF_ERROR(env_.RemoveFile(SnapshotPath(o)));
  }
  return Status::Ok();
}

Status ProducerStateManager::Reset() {
  producers_.clear();
  map_end_offset_ = Offset(0);
  last_snapshot_offset_ = Offset(0);
  KSIM_ASSIGN_OR_RETURN(const std::vector<Offset> offsets, SnapshotOffsets());
  for (const Offset o : offsets) KSIM_RETURN_IF_ERROR(env_.RemoveFile(SnapshotPath(o)));
  return Status::Ok();
}

Bytes ProducerStateManager::EncodeSnapshot(
    const std::map<ProducerId, ProducerStateEntry>& producers) {
  // Kafka's ProducerStateManager snapshot, version 1: only each producer's last batch is kept.
  Bytes out;
  PutInt16(out, kSnapshotVersion);
  PutInt32(out, 0);  // CRC, filled in below
  KSIM_CHECK(producers.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));
  PutInt32(out, static_cast<int32_t>(producers.size()));
  for (const auto& [id, entry] : producers) {
    const bool empty = entry.batches.empty();
    const BatchMetadata last =
        empty ? BatchMetadata{kNoSequence, kNoSequence, Offset(-1), Offset(-1), kNoTimestamp}
              : entry.batches.back();
    PutInt64(out, id.value());
    PutInt16(out, entry.epoch.value());
    PutInt32(out, last.last_sequence.value());
    PutInt64(out, last.last_offset.value());
    const int64_t delta = last.last_offset - last.first_offset;
    KSIM_CHECK(delta >= 0 && delta <= std::numeric_limits<int32_t>::max());
    PutInt32(out, static_cast<int32_t>(delta));
    PutInt64(out, last.timestamp_ms);
    PutInt32(out, -1);  // coordinator epoch: transactions are not modelled
    PutInt64(out, -1);  // current transaction's first offset: none
  }
  const uint32_t crc = crc32c::Value(ByteView(out).subspan(kSnapshotEntriesOffset));
  StoreBigEndian32(out.data() + kSnapshotCrcOffset, crc);
  return out;
}

Result<std::vector<ProducerStateEntry>> ProducerStateManager::DecodeSnapshot(ByteView bytes) {
  if (bytes.size() < kSnapshotEntriesOffset + 4) {
    return SnapshotCorrupt(std::to_string(bytes.size()) + " bytes is too short");
  }
  const auto version = static_cast<int16_t>(LoadBigEndian16(bytes.data()));
  if (version != kSnapshotVersion) {
    return SnapshotCorrupt("unknown version " + std::to_string(version));
  }
  const uint32_t stored = LoadBigEndian32(bytes.data() + kSnapshotCrcOffset);
  const uint32_t computed = crc32c::Value(bytes.subspan(kSnapshotEntriesOffset));
  if (stored != computed) return SnapshotCorrupt("CRC mismatch");
  const auto count = static_cast<int32_t>(LoadBigEndian32(bytes.data() + kSnapshotEntriesOffset));
  const size_t body = bytes.size() - kSnapshotEntriesOffset - 4;
  if (count < 0 || body % kSnapshotEntrySize != 0 ||
      body / kSnapshotEntrySize != static_cast<size_t>(count)) {
    return SnapshotCorrupt("entry count " + std::to_string(count) + " does not match " +
                           std::to_string(body) + " bytes");
  }
  std::vector<ProducerStateEntry> entries;
  entries.reserve(static_cast<size_t>(count));
  std::set<ProducerId> ids;  // Kafka writes a HashMap's order: any order, but no repeats
  const uint8_t* p = bytes.data() + kSnapshotEntriesOffset + 4;
  for (int32_t i = 0; i < count; ++i, p += kSnapshotEntrySize) {
    ProducerStateEntry entry;
    entry.producer_id = ProducerId(static_cast<int64_t>(LoadBigEndian64(p)));
    entry.epoch = ProducerEpoch(static_cast<int16_t>(LoadBigEndian16(p + 8)));
    const auto last_sequence = static_cast<int32_t>(LoadBigEndian32(p + 10));
    const auto last_offset = static_cast<int64_t>(LoadBigEndian64(p + 14));
    const auto delta = static_cast<int32_t>(LoadBigEndian32(p + 22));
    const auto timestamp = static_cast<int64_t>(LoadBigEndian64(p + 26));
    if (entry.producer_id.value() < 0 || last_offset < -1 || delta < 0 ||
        last_offset - delta < -1 || last_sequence < -1) {
      return SnapshotCorrupt("entry " + std::to_string(i) + " has impossible values");
    }
    if (!ids.insert(entry.producer_id).second) {
      return SnapshotCorrupt("producer " + ToString(entry.producer_id) + " appears twice");
    }
    if (last_offset >= 0) {
      // The first sequence, wrapping below 0 back to INT32_MAX as sequences do.
      int64_t first_sequence = last_sequence;
      if (last_sequence >= 0) {
        first_sequence = int64_t{last_sequence} - delta;
        if (first_sequence < 0) first_sequence += int64_t{std::numeric_limits<int32_t>::max()} + 1;
      }
      entry.batches.push_back(BatchMetadata{Sequence(static_cast<int32_t>(first_sequence)),
                                            Sequence(last_sequence), Offset(last_offset - delta),
                                            Offset(last_offset), timestamp});
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace ksim
