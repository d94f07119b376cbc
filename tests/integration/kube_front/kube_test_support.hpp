#pragma once
// Test harness for the Kubernetes front: the "small" lab in real time, the front over a real HTTPS server on
// loopback (port 0, generated PKI), all on one background io_context thread like the lab server; a blocking
// HTTP helper and a watch recorder on the test side; and a small Swagger 2.0 validator for contract checks.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/cancel.hpp"
#include "protocol/http/client.hpp"
#include "protocol/http/server.hpp"
#include "protocol/http/tls.hpp"
#include "simulator/kube/kube_front.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube::testing {

namespace asio = boost::asio;
using json = nlohmann::json;
using namespace std::chrono_literals;

class TestLab {
 public:
  explicit TestLab(KubeFrontOptions options = {}, const std::function<void(model::LabSpec&)>& tweak = {}) {
    auto spec = model::load_lab_spec("small");
    if (!spec) throw std::runtime_error(spec.error().what());
    if (tweak) tweak(*spec);
    token = spec->kube.token;
    pki = http::generate_pki("127.0.0.1", {"127.0.0.1", "localhost"});
    model::LabOptions lab_options;
    lab_options.executor = io.get_executor();
    lab = std::make_unique<model::Lab>(*spec, lab_options);
    front = std::make_unique<KubeFront>(*lab, options);
    http::ServerOptions server_options;
    http::TlsServerOptions tls;
    tls.cert_data = pki.leaf_cert_pem;
    tls.key_data = pki.leaf_key_pem;
    server_options.tls = tls;
    server = std::make_unique<http::Server>(io.get_executor(), server_options, front->handler());
    auto started = server->start();
    if (!started) throw std::runtime_error(started.error().what());
    base_url = server->base_url();
    work = std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(io.get_executor());
    thread = std::thread([this] { io.run(); });
  }

  ~TestLab() {
    on_lab([this] {
      server->stop_now();
      lab->shutdown();
      return 0;
    });
    work.reset();
    io.stop();
    thread.join();
    server.reset();
    front.reset();
    lab.reset();
  }

  // Runs fn on the lab's thread and returns its result.
  template <class Fn>
  auto on_lab(Fn fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto result = task.get_future();
    asio::post(io, [&task] { task(); });
    return result.get();
  }

  http::ClientOptions client_options(std::optional<std::string> bearer) const {
    http::ClientOptions options;
    options.base_url = base_url;
    options.tls.ca_data = pki.ca_cert_pem;
    options.retry.max_attempts = 1;
    if (bearer) options.default_headers.emplace_back("Authorization", "Bearer " + *bearer);
    return options;
  }

  http::Response call(const std::string& method, const std::string& target, const std::string& body = "",
                      const std::string& content_type = "application/json",
                      std::optional<std::string> bearer = std::nullopt, bool authenticate = true) {
    asio::io_context client_io;
    http::Client client(
        client_io.get_executor(),
        client_options(authenticate ? std::optional<std::string>(bearer.value_or(token)) : bearer));
    http::Request request;
    request.method = method;
    request.target = target;
    request.body = body;
    if (!body.empty()) request.headers.emplace_back("Content-Type", content_type);
    request.headers.emplace_back("Accept", "application/json");
    std::optional<Expected<http::Response>> out;
    asio::co_spawn(
        client_io, [&]() -> asio::awaitable<void> { out.emplace(co_await client.request(request)); },
        asio::detached);
    client_io.run();
    if (!out || !out->has_value()) {
      ADD_FAILURE() << method << " " << target << " failed: " << (out ? out->error().what() : "no result");
      return http::Response{};
    }
    return std::move(**out);
  }

  // Sends many requests over one pooled client, `concurrency` at a time; returns each status (-1: failed).
  std::vector<int> call_many(const std::vector<http::Request>& requests, std::size_t concurrency) {
    asio::io_context client_io;
    auto options = client_options(token);
    options.max_connections = concurrency;
    http::Client client(client_io.get_executor(), options);
    std::vector<int> statuses(requests.size(), -1);
    std::size_t next = 0;
    for (std::size_t w = 0; w < concurrency; ++w) {
      asio::co_spawn(
          client_io,
          [&]() -> asio::awaitable<void> {
            while (next < requests.size()) {
              std::size_t i = next++;
              auto response = co_await client.request(requests[i]);
              statuses[i] = response ? response->status : -1;
            }
          },
          asio::detached);
    }
    client_io.run();
    return statuses;
  }

  json get_json(const std::string& target) {
    auto response = call("GET", target);
    EXPECT_EQ(response.status, 200) << target << ": " << response.body;
    return json::parse(response.body, nullptr, false);
  }

  // Polls GET target until pred(object) holds (real-time lab: boots take milliseconds).
  json wait_for(const std::string& target, const std::function<bool(const json&)>& pred,
                std::chrono::milliseconds timeout = 15s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    json last;
    while (std::chrono::steady_clock::now() < deadline) {
      auto response = call("GET", target);
      last = json::parse(response.body, nullptr, false);
      if (response.status == 200 && pred(last)) return last;
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "timed out waiting on " << target << "; last: " << last.dump().substr(0, 2000);
    return last;
  }

  bool wait_gone(const std::string& target, std::chrono::milliseconds timeout = 15s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (call("GET", target).status == 404) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  asio::io_context io;
  std::unique_ptr<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::unique_ptr<model::Lab> lab;
  std::unique_ptr<KubeFront> front;
  std::unique_ptr<http::Server> server;
  std::thread thread;
  http::GeneratedPki pki;
  std::string token;
  std::string base_url;
};

// Reads a watch stream on its own thread and keeps its lines.
class WatchRecorder {
 public:
  // `observer` sees every parsed line on the reader thread; with keep_lines false the lines are not kept
  // (scale runs: thousands of events).
  WatchRecorder(TestLab& lab, std::string target, std::function<void(const json&)> observer = {},
                bool keep_lines = true)
      : observer_(std::move(observer)), keep_lines_(keep_lines) {
    thread_ = std::thread([this, &lab, target] {
      auto& io = io_;
      http::Client client(io.get_executor(), lab.client_options(lab.token));
      http::Request request;
      request.target = target;
      asio::co_spawn(
          io,
          [&]() -> asio::awaitable<void> {
            auto result = co_await client.stream(
                request,
                [this](int status, const http::Headers&) {
                  std::lock_guard lock(mutex_);
                  status_ = status;
                  cv_.notify_all();
                },
                [this](std::string_view line) {
                  if (line.empty()) return;
                  json parsed = json::parse(line, nullptr, false);
                  if (observer_) observer_(parsed);
                  std::lock_guard lock(mutex_);
                  ++line_count_;
                  if (keep_lines_) lines_.push_back(std::move(parsed));
                  cv_.notify_all();
                },
                cancel_);
            std::lock_guard lock(mutex_);
            ended_ = true;
            ended_ok_ = result.has_value();
            cv_.notify_all();
          },
          asio::detached);
      io.run();
    });
  }
  ~WatchRecorder() { stop(); }

  void stop() {
    cancel_.cancel();
    if (thread_.joinable()) thread_.join();
  }

  // Waits until pred(lines) holds; returns whether it did before the timeout.
  bool wait(const std::function<bool(const std::vector<json>&)>& pred,
            std::chrono::milliseconds timeout = 15s) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return pred(lines_); });
  }
  bool wait_headers(std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return status_ != 0 || ended_; });
  }
  bool wait_end(std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return ended_; });
  }
  std::vector<json> lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  int status() {
    std::lock_guard lock(mutex_);
    return status_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void(const json&)> observer_;
  bool keep_lines_ = true;
  std::vector<json> lines_;
  std::size_t line_count_ = 0;
  int status_ = 0;
  bool ended_ = false;
  bool ended_ok_ = false;
  // Outlives the reader thread: the client's cancel callback may still post to it after the stream ended.
  asio::io_context io_;
  CancelSignal cancel_;
  std::thread thread_;
};

// Minimal Swagger 2.0 schema validator: $ref, type (incl. ["string","null"] and nullable), properties
// (unknown properties are errors unless additionalProperties allows them), required, items,
// additionalProperties, enum.
class SwaggerValidator {
 public:
  explicit SwaggerValidator(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    doc_ = json::parse(in);
  }

  std::vector<std::string> validate(const json& value, const std::string& definition) const {
    std::vector<std::string> errors;
    check(value, {{"$ref", "#/definitions/" + definition}}, definition, errors, 0);
    return errors;
  }

 private:
  static bool type_is(const json& schema, const char* type) {
    if (!schema.contains("type")) return false;
    const json& t = schema["type"];
    if (t.is_string()) return t == type;
    if (t.is_array()) {
      for (const auto& x : t) {
        if (x == type) return true;
      }
    }
    return false;
  }

  void check(const json& value, const json& schema, const std::string& path, std::vector<std::string>& errors,
             int depth) const {
    if (depth > 64) return;
    if (schema.contains("$ref")) {
      std::string ref = schema["$ref"];
      const std::string prefix = "#/definitions/";
      std::string name = ref.substr(prefix.size());
      if (!doc_["definitions"].contains(name)) {
        errors.push_back(path + ": unknown definition " + name);
        return;
      }
      check(value, doc_["definitions"][name], path, errors, depth + 1);
      return;
    }
    if (value.is_null()) {
      if (schema.value("nullable", false) || type_is(schema, "null") || !schema.contains("type")) return;
      errors.push_back(path + ": null not allowed");
      return;
    }
    if (!schema.contains("type")) return;  // free-form
    if (type_is(schema, "object")) {
      if (!value.is_object()) {
        errors.push_back(path + ": expected object, got " + value.dump().substr(0, 80));
        return;
      }
      const json* props = schema.contains("properties") ? &schema["properties"] : nullptr;
      for (const auto& [key, item] : value.items()) {
        if (props && props->contains(key)) {
          check(item, (*props)[key], path + "." + key, errors, depth + 1);
        } else if (schema.contains("additionalProperties") && schema["additionalProperties"].is_object()) {
          check(item, schema["additionalProperties"], path + "." + key, errors, depth + 1);
        } else if (props) {
          errors.push_back(path + ": unknown field \"" + key + "\"");
        }
      }
      if (schema.contains("required")) {
        for (const auto& key : schema["required"]) {
          if (!value.contains(key.get<std::string>()))
            errors.push_back(path + ": missing required " + key.dump());
        }
      }
      return;
    }
    if (type_is(schema, "array")) {
      if (!value.is_array()) {
        errors.push_back(path + ": expected array");
        return;
      }
      if (schema.contains("items")) {
        for (std::size_t i = 0; i < value.size(); ++i) {
          check(value[i], schema["items"], path + "[" + std::to_string(i) + "]", errors, depth + 1);
        }
      }
      return;
    }
    bool ok = (type_is(schema, "string") && value.is_string()) ||
              (type_is(schema, "integer") && value.is_number_integer()) ||
              (type_is(schema, "number") && value.is_number()) ||
              (type_is(schema, "boolean") && value.is_boolean());
    if (!ok) {
      errors.push_back(path + ": expected " + schema["type"].dump() + ", got " + value.dump().substr(0, 80));
      return;
    }
    if (schema.contains("enum") &&
        std::find(schema["enum"].begin(), schema["enum"].end(), value) == schema["enum"].end()) {
      errors.push_back(path + ": " + value.dump() + " not in enum");
    }
  }

  json doc_;
};

inline std::string join_errors(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += e + "\n";
  return out;
}

}  // namespace bootstorm::sim::kube::testing
