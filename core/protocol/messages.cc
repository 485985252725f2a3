#include "core/protocol/messages.h"

#include <type_traits>

namespace ksim {
namespace {

template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsVector<SharedVector<T>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsStrong : std::false_type {};
template <class Tag, class Rep>
struct IsStrong<StrongInt<Tag, Rep>> : std::true_type {};
// An optional group of fields a version added (FetchSessionRequest): absent, it is not on the
// wire at all, so it counts no bytes and is not shown.
template <class T>
struct IsVersionedGroup : std::false_type {};
template <class T>
requires(T::kAbsentBeforeItsVersion) struct IsVersionedGroup<std::optional<T>> : std::true_type {
};

// Adds up the wire size of each field (the rules are in protocol.h, ApproximateWireSize).
struct SizeVisitor {
  int64_t total = 0;

  template <class T>
  void operator()(std::string_view /*name*/, const T& value) {
    if constexpr (IsVersionedGroup<T>::value) {
      if (value.has_value()) total += SizeOf(*value);
    } else {
      total += SizeOf(value);
    }
  }

  template <class T>
  static int64_t SizeOf(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      return 1;
    } else if constexpr (std::is_same_v<T, Errc>) {
      return 2;
    } else if constexpr (std::is_integral_v<T>) {
      return sizeof(T);
    } else if constexpr (IsStrong<T>::value) {
      return sizeof(typename T::rep);
    } else if constexpr (std::is_same_v<T, std::string>) {
      return 2 + static_cast<int64_t>(value.size());
    } else if constexpr (std::is_same_v<T, Bytes>) {
      return 4 + static_cast<int64_t>(value.size());
    } else if constexpr (std::is_same_v<T, TopicPartition>) {
      return 2 + static_cast<int64_t>(value.topic.size()) + 4;
    } else if constexpr (IsOptional<T>::value) {
      if (value.has_value()) return SizeOf(*value);
      return IsVector<typename T::value_type>::value ? 4 : 2;  // null array -1, null string -1
    } else if constexpr (IsVector<T>::value) {
      int64_t size = 4;
      for (const auto& element : value) size += SizeOf(element);
      return size;
    } else {
      SizeVisitor nested;
      value.Fields(nested);
      return nested.total;
    }
  }
};

// Builds the trace summary of each field.
struct JsonVisitor {
  nlohmann::ordered_json& out;

  template <class T>
  void operator()(std::string_view name, const T& value) {
    if constexpr (IsVersionedGroup<T>::value) {
      if (!value.has_value()) return;
    }
    out[std::string(name)] = ToJson(value);
  }

  template <class T>
  static nlohmann::ordered_json ToJson(const T& value) {
    if constexpr (std::is_same_v<T, Errc>) {
      return std::string(ErrcName(value));
    } else if constexpr (std::is_arithmetic_v<T>) {
      return value;
    } else if constexpr (IsStrong<T>::value) {
      return value.value();
    } else if constexpr (std::is_same_v<T, std::string>) {
      return value;
    } else if constexpr (std::is_same_v<T, Bytes>) {
      return nlohmann::ordered_json{{"bytes", value.size()}};
    } else if constexpr (std::is_same_v<T, TopicPartition>) {
      return ToString(value);
    } else if constexpr (IsOptional<T>::value) {
      if (value.has_value()) return ToJson(*value);
      return nullptr;
    } else if constexpr (IsVector<T>::value) {
      nlohmann::ordered_json array = nlohmann::ordered_json::array();
      for (const auto& element : value) array.push_back(ToJson(element));
      return array;
    } else {
      nlohmann::ordered_json object = nlohmann::ordered_json::object();
      value.Fields(JsonVisitor{object});
      return object;
    }
  }
};

constexpr int64_t kRequestHeaderBytes = 4 + 2 + 2 + 4 + 2;
constexpr int64_t kResponseHeaderBytes = 4 + 4;

}  // namespace

std::string_view MessageKind(const Message& message) {
  return std::visit([](const auto& m) { return std::decay_t<decltype(m)>::kKind; }, message);
}

int16_t ApiKey(const Message& message) {
  return std::visit([](const auto& m) { return std::decay_t<decltype(m)>::kApiKey; }, message);
}

bool IsRequest(const Message& message) {
  return std::visit([](const auto& m) { return std::decay_t<decltype(m)>::kIsRequest; }, message);
}

bool ExpectsResponse(const Message& message) {
  if (const auto* produce = std::get_if<ProduceRequest>(&message)) return produce->acks != 0;
  return IsRequest(message);
}

int32_t CorrelationId(const Message& message) {
  return std::visit([](const auto& m) { return m.correlation_id; }, message);
}

void SetCorrelationId(Message& message, int32_t correlation_id) {
  std::visit([correlation_id](auto& m) { m.correlation_id = correlation_id; }, message);
}

int64_t ApproximateWireSize(const Message& message) {
  return std::visit(
      [](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        SizeVisitor visitor;
        m.Fields(visitor);
        return (T::kIsRequest ? kRequestHeaderBytes : kResponseHeaderBytes) + visitor.total;
      },
      message);
}

nlohmann::ordered_json Describe(const Message& message) {
  return std::visit(
      [](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        nlohmann::ordered_json out = nlohmann::ordered_json::object();
        out["kind"] = std::string(T::kKind);
        out["correlation_id"] = m.correlation_id;
        m.Fields(JsonVisitor{out});
        return out;
      },
      message);
}

}  // namespace ksim
