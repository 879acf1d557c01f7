/// How a durable-queue benchmark spreads its no-op jobs over queues, and
/// how many worker processes run them (for procrastinate: locks and worker
/// processes).
struct DurableQueueShape {
  var queues: Int
  var workers: Int
  var label: String

  /// One strict queue with one worker, and 100 queues with 4 workers.
  static let both = [
    DurableQueueShape(queues: 1, workers: 1, label: "1 strict queue, 1 worker"),
    DurableQueueShape(queues: 100, workers: 4, label: "100 queues, 4 workers"),
  ]

  /// A script that submits `jobs` no-op jobs round-robin over the queues
  /// (`q`, or `q1` to `qN`).
  func submitSource(jobs: Int) -> String {
    """
    local queue = require "lunar.queue"
    local queues = {}
    for k = 1, \(queues) do
      queues[k] = queue.new { name = \(queues == 1 ? "\"q\"" : "\"q\" .. k"), durable = true }
    end
    for i = 1, \(jobs) do
      queues[(i - 1) % \(queues) + 1]:submit("noop", i)
    end

    """
  }

  /// The file every `lunar worker` loads: the no-op action.
  static let workerSource = "lunar.action(\"noop\", function() end)\n"
}
