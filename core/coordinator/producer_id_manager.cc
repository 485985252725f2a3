#include "core/coordinator/producer_id_manager.h"

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"

namespace ksim {
namespace {

constexpr int64_t kCurrentVersion = 1;  // ProducerIdManager.CurrentVersion

Status Malformed(std::string_view data, const std::string& why) {
  return Status(Errc::kCorruption, std::string(ProducerIdManager::kBlockPath) + " data \"" +
                                       std::string(data) + "\": " + why);
}

// Kafka writes the bounds as decimal strings.
std::optional<int64_t> ParseDecimal(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

ProducerIdManager::ProducerIdManager(BrokerId broker, Coordination& zk, EventSink events)
    : broker_(broker), zk_(zk), events_(std::move(events)) {
  next_id_ = block_.block_end + 1;  // nothing to hand out before the first claim
}

ProducerIdManager::~ProducerIdManager() = default;

std::string ProducerIdManager::EncodeBlock(const ProducerIdBlock& block) {
  // generateProducerIdBlockJson: version, broker, block_start, block_end (bounds as strings).
  nlohmann::ordered_json json;
  json["version"] = kCurrentVersion;
  json["broker"] = block.broker.value();
  json["block_start"] = std::to_string(block.block_start);
  json["block_end"] = std::to_string(block.block_end);
  return json.dump();
}

Result<ProducerIdBlock> ProducerIdManager::DecodeBlock(std::string_view data) {
  const nlohmann::json json = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return Malformed(data, "not a JSON object");
  const auto broker = json.find("broker");
  const auto start = json.find("block_start");
  const auto end = json.find("block_end");
  if (broker == json.end() || !broker->is_number_integer()) {
    return Malformed(data, "no integer \"broker\"");
  }
  if (start == json.end() || !start->is_string() || end == json.end() || !end->is_string()) {
    return Malformed(data, "block_start and block_end must be strings");
  }
  const std::optional<int64_t> first = ParseDecimal(start->get<std::string>());
  const std::optional<int64_t> last = ParseDecimal(end->get<std::string>());
  const int64_t broker_id = broker->get<int64_t>();
  if (!first || !last || *first < 0 || *last < *first) {
    return Malformed(data, "not a block of ids");
  }
  if (broker_id < std::numeric_limits<int32_t>::min() ||
      broker_id > std::numeric_limits<int32_t>::max()) {
    return Malformed(data, "broker id out of range");
  }
  return ProducerIdBlock{BrokerId(static_cast<int32_t>(broker_id)), *first, *last};
}

Result<ProducerIdBlock> ProducerIdManager::NextBlock(const std::optional<ProducerIdBlock>& last,
                                                     BrokerId broker) {
  if (!last.has_value()) return ProducerIdBlock{broker, 0, kBlockSize - 1};
  if (last->block_end > std::numeric_limits<int64_t>::max() - kBlockSize) {
    return Status(Errc::kUnsupported, "have exhausted all producer ids");
  }
  return ProducerIdBlock{broker, last->block_end + 1, last->block_end + kBlockSize};
}

void ProducerIdManager::HandleInitProducerId(const InitProducerIdRequest& request,
                                             std::function<void(InitProducerIdResponse)> done) {
  if (request.transactional_id.has_value()) {
    // TransactionCoordinator.handleInitProducerId serves a transactional id; ksim models
    // idempotence only (an empty id is INVALID_REQUEST in Kafka too).
    InitProducerIdResponse response;
    response.correlation_id = request.correlation_id;
    response.error_code = Errc::kInvalidRequest;
    done(std::move(response));
    return;
  }
  waiting_.push_back(Waiting{request.correlation_id, std::move(done)});
  AnswerWaiting();
}

void ProducerIdManager::AnswerWaiting() {
  while (!waiting_.empty() && next_id_ <= block_.block_end) {
    Waiting waiting = std::move(waiting_.front());
    waiting_.pop_front();
    InitProducerIdResponse response;
    response.correlation_id = waiting.correlation_id;
    response.producer_id = ProducerId(next_id_++);
    response.producer_epoch = ProducerEpoch(0);
    Emit(events_, ev::kProducerIdAssigned,
         {{field::kBroker, broker_.value()}, {field::kProducerId, response.producer_id.value()}});
    waiting.done(std::move(response));
  }
  if (!waiting_.empty() && !claiming_) ClaimNextBlock();
}

void ProducerIdManager::ClaimNextBlock() {
  claiming_ = true;
  zk_.GetData(std::string(kBlockPath), /*watch=*/false,
              Guarded([this](Result<ZnodeData> read) { OnBlockRead(std::move(read)); }));
}

void ProducerIdManager::OnBlockRead(Result<ZnodeData> read) {
  const bool missing = !read.ok() && read.status().code() == Errc::kNoNode;
  if (!read.ok() && !missing) {
    FailWaiting(read.status());
    return;
  }
  std::optional<ProducerIdBlock> last;
  if (read.ok() && !read->data.empty()) {
    Result<ProducerIdBlock> decoded = DecodeBlock(read->data);
    if (!decoded.ok()) {
      FailWaiting(decoded.status());
      return;
    }
    last = *decoded;
  }
  Result<ProducerIdBlock> next = NextBlock(last, broker_);
  if (!next.ok()) {
    FailWaiting(next.status());
    return;
  }
  const ProducerIdBlock block = *next;
  auto written = Guarded([this, block](Status status) { OnClaimWritten(block, status); });
  if (missing) {
    zk_.Create(std::string(kBlockPath), EncodeBlock(block), CreateMode::kPersistent,
               [written](Result<std::string> created) mutable { written(created.status()); });
  } else {
    // conditionalUpdatePath: only if nobody claimed a block since we read it.
    zk_.SetData(std::string(kBlockPath), EncodeBlock(block), read->stat.version,
                [written](Result<ZnodeStat> set) mutable { written(set.status()); });
  }
}

void ProducerIdManager::OnClaimWritten(const ProducerIdBlock& block, Status written) {
  if (written.code() == Errc::kBadVersion || written.code() == Errc::kNodeExists) {
    // Another broker claimed a block between our read and our write: read again.
    ++claim_conflicts_;
    ClaimNextBlock();
    return;
  }
  if (!written.ok()) {
    FailWaiting(written);
    return;
  }
  claiming_ = false;
  ++blocks_claimed_;
  block_ = block;
  next_id_ = block.block_start;
  Emit(events_, ev::kProducerIdBlock,
       {{field::kBroker, broker_.value()},
        {field::kBlockStart, block.block_start},
        {field::kBlockEnd, block.block_end}});
  AnswerWaiting();
}

void ProducerIdManager::FailWaiting(const Status& error) {
  // ZooKeeper unreachable or the znode unreadable: the waiting producers retry (retriable
  // error); the next request starts a new claim.
  claiming_ = false;
  Emit(events_, ev::kProducerIdBlockError,
       {{field::kBroker, broker_.value()}, {field::kError, error.ToString()}});
  std::deque<Waiting> failed = std::move(waiting_);
  waiting_.clear();
  for (Waiting& waiting : failed) {
    InitProducerIdResponse response;
    response.correlation_id = waiting.correlation_id;
    response.error_code = Errc::kCoordinatorNotAvailable;
    waiting.done(std::move(response));
  }
}

}  // namespace ksim
