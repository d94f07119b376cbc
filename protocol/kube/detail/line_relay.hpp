#pragma once
// Hands watch lines, stamped on the watch thread, to the caller's executor in order with one post per batch.
// A post per line woke the caller's loop once per line: during a burst of VMI updates the two threads took
// turns on the CPU line by line, and the watch thread drained the socket slower than the server filled it,
// which is the observation error (bench/README.md). Now the first line of a batch schedules a drain and the
// lines that arrive before it runs join the batch without another wakeup.
//
// Order: a line is delivered by a drain posted no later than the line was pushed (whenever the queue is not
// empty, a drain that has not yet taken it is pending), so a completion posted after the last push runs after
// every line has been delivered.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace bootstorm::kube::detail {

template <class Item>
class LineRelay : public std::enable_shared_from_this<LineRelay<Item>> {
 public:
  using Deliver = std::function<void(Item&)>;

  LineRelay(boost::asio::any_io_executor target, Deliver deliver)
      : target_(std::move(target)), deliver_(std::move(deliver)) {}

  // Any thread.
  void push(Item item) {
    bool schedule = false;
    {
      std::lock_guard lock(mutex_);
      schedule = queue_.empty();
      queue_.push_back(std::move(item));
    }
    if (schedule) boost::asio::post(target_, [self = this->shared_from_this()] { self->drain(); });
  }

  // Drains run so far (the number of wakeups of the target; for tests and statistics).
  std::size_t drains() const {
    std::lock_guard lock(mutex_);
    return drains_;
  }

 private:
  // On the target executor.
  void drain() {
    std::vector<Item> batch;
    {
      std::lock_guard lock(mutex_);
      batch.swap(queue_);
      ++drains_;
    }
    for (Item& item : batch) deliver_(item);
  }

  boost::asio::any_io_executor target_;
  Deliver deliver_;
  mutable std::mutex mutex_;
  std::vector<Item> queue_;  // guarded by mutex_
  std::size_t drains_ = 0;   // guarded by mutex_
};

}  // namespace bootstorm::kube::detail
