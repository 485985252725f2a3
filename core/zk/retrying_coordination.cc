#include "core/zk/retrying_coordination.h"

namespace ksim {
namespace {

const Status& StatusOf(const Status& status) { return status; }
template <class T>
const Status& StatusOf(const Result<T>& result) {
  return result.status();
}

}  // namespace

template <class R>
void RetryingCoordination::Retrying(std::function<void(std::function<void(R)>)> issue,
                                    std::function<void(R)> done) {
  std::function<void(std::function<void(R)>)> again = issue;
  again([this, token = token_, issue = std::move(issue), done = std::move(done)](R result) mutable {
    if (!*token) return;
    if (StatusOf(result) == Errc::kConnectionLoss) {
      ++retries_;
      Retrying<R>(std::move(issue), std::move(done));
      return;
    }
    if (done) done(std::move(result));
  });
}

void RetryingCoordination::Create(std::string path, std::string data, CreateMode mode,
                                  CreateCallback done) {
  Retrying<Result<std::string>>(
      [this, path = std::move(path), data = std::move(data), mode](CreateCallback callback) {
        target().Create(path, data, mode, std::move(callback));
      },
      std::move(done));
}

void RetryingCoordination::Delete(std::string path, int32_t version, DeleteCallback done) {
  Retrying<Status>([this, path = std::move(path),
                    version](DeleteCallback callback) { target().Delete(path, version, callback); },
                   std::move(done));
}

void RetryingCoordination::Exists(std::string path, bool watch, ExistsCallback done) {
  Retrying<Result<std::optional<ZnodeStat>>>(
      [this, path = std::move(path), watch](ExistsCallback callback) {
        target().Exists(path, watch, std::move(callback));
      },
      std::move(done));
}

void RetryingCoordination::GetData(std::string path, bool watch, GetDataCallback done) {
  Retrying<Result<ZnodeData>>(
      [this, path = std::move(path), watch](GetDataCallback callback) {
        target().GetData(path, watch, std::move(callback));
      },
      std::move(done));
}

void RetryingCoordination::SetData(std::string path, std::string data, int32_t version,
                                   SetDataCallback done) {
  Retrying<Result<ZnodeStat>>(
      [this, path = std::move(path), data = std::move(data), version](SetDataCallback callback) {
        target().SetData(path, data, version, std::move(callback));
      },
      std::move(done));
}

void RetryingCoordination::GetChildren(std::string path, bool watch, ChildrenCallback done) {
  Retrying<Result<std::vector<std::string>>>(
      [this, path = std::move(path), watch](ChildrenCallback callback) {
        target().GetChildren(path, watch, std::move(callback));
      },
      std::move(done));
}

}  // namespace ksim
