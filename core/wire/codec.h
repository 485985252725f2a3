// Kafka's wire protocol for the client-facing APIs (core/protocol/api_versions.h lists them and
// their versions): frames, request header v1, response header v0, and each message's body for
// every served version, between bytes and the message structs of core/protocol/messages.h. The
// layouts follow the protocol guide (https://kafka.apache.org/protocol) and Kafka 2.0's
// `org.apache.kafka.common.protocol.types` schemas; docs/protocol.md ("The wire") has the rules
// and the sources.
//
// A frame is an INT32 size followed by that many bytes. A request's bytes are its header
// (api_key INT16, api_version INT16, correlation_id INT32, client_id NULLABLE_STRING) and its
// body; a response's are the correlation id and the body. The header's correlation id is kept
// in the message's own correlation_id.
//
// Decoding never trusts its input: a truncated body, a negative or oversized length, an array
// count larger than the bytes left, an unknown api key or a version outside the served range is
// an error naming what and where, never a crash or a read past the buffer
// (fuzz/wire_request_fuzzer.cc). Trailing bytes after a body are ignored, as Kafka's request
// parsing ignores them. Pure functions; no state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/protocol/messages.h"

namespace ksim::wire {

// Kafka's socket.request.max.bytes (100 MiB): a frame announcing more is refused.
inline constexpr int32_t kMaxFrameBytes = 104857600;

struct RequestHeader {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
  friend bool operator==(const RequestHeader&, const RequestHeader&) = default;
};

struct DecodedRequest {
  RequestHeader header;
  Message request;  // its correlation_id is the header's
};

// The size a frame announces when `bytes` starts with the 4 bytes of one, else nullopt.
std::optional<int32_t> FrameSize(ByteView bytes);

// The header of a request frame's contents (after the size). kInvalidRequest when truncated.
Result<RequestHeader> DecodeRequestHeader(ByteView frame);

// A request frame's contents (after the size) as a header and message. Errors:
// kInvalidRequest (malformed: the message says where), kUnsupportedVersion (the api key is
// served, this version is not; the header decoded), kUnsupported (an api key ksim does not
// serve over the wire).
Result<DecodedRequest> DecodeRequest(ByteView frame);

// A whole request frame (size, header v1, body). REQUIRES: IsRequest(request), its api key and
// `api_version` served; header.api_key matches the message (the header's correlation id is
// written, the message's ignored).
Bytes EncodeRequest(const RequestHeader& header, const Message& request);

// A whole response frame (size, correlation id, body) in `api_version`. REQUIRES: the response
// of a served api key, the version served. An ApiVersions response is always encoded as asked
// (the UNSUPPORTED_VERSION answer is v0: EncodeResponse(v0)).
Bytes EncodeResponse(int16_t api_version, const Message& response);

// A response frame's contents (after the size) for a request of `api_key` at `api_version`.
// Errors as DecodeRequest.
Result<Message> DecodeResponse(int16_t api_key, int16_t api_version, ByteView frame);

}  // namespace ksim::wire
