import LuaKit

/// The ways Lua waits for Swift async work, each a thin layer over
/// `OffLoopWork`, which counts the work in flight.
extension RuntimeCore {
  /// Runs async Swift `work` off the loop and then `then` on the loop with
  /// its value; the loop counts it as work in flight meanwhile. The value
  /// counts against the memory limit until `then` has run (a value over it
  /// arrives all the same: Lua's next allocation fails instead).
  public func afterAsync(_ work: @escaping @Sendable () async -> LuaValue, then: @escaping (LuaValue) -> Void) {
    let budget = memoryBudget
    offLoopWork.start({
      let value = await work()
      return ChargedValue(value, charge: budget.isLimited ? budget.chargeAnyway(value.estimatedSize) : nil)
    }) { charged in
      withExtendedLifetime(charged) { then(charged.value) }
    }
  }

  /// Suspends the Lua code calling the host function `call` until `work`
  /// is done, and returns its value there (or raises its error); `subject`
  /// names what it waits for in traces and deadlock reports. Return what
  /// this returns from the host function. The work starts at once on the
  /// loop thread (`Task.immediate`): a result ready without suspending is
  /// returned directly; work that suspends finishes on Swift's pool and
  /// its result comes back through the loop. The value counts against the
  /// memory limit from when the work returns it until Lua has its copy;
  /// one that does not fit is `not enough memory`. Cancelling the waiting
  /// task cancels the work.
  public func suspend(
    _ call: LuaCall, awaiting subject: String, _ work: @escaping @Sendable () async throws -> LuaValue
  ) -> LuaReturn {
    var wait: Wait?
    let start = offLoopWork.startImmediately(holding: memoryBudget, work, deliverLater: { ticket in
      let later = Wait(subject: subject)
      later.awaitsSwiftWork = true
      later.onCancel = { [unowned offLoopWork] in offLoopWork.cancel(ticket) }
      wait = later
      return { [unowned self] result in
        scheduler.complete(later, waitResult(for: result, location: later.location))
      }
    })
    switch start {
    case .finished(let result):
      return scheduler.deliver(waitResult(for: result, location: scheduler.location(of: call.L)), on: call.L)
    case .running:
      return scheduler.suspend(call, on: wait!)
    }
  }

  /// Wraps a Swift async function as a Lua function that waits for it (see
  /// `suspend(_:awaiting:_:)`).
  public func asyncFunction(_ body: @escaping AsyncLuaFunction) -> LuaFunction {
    { [unowned self] call in
      // The arguments are copies the work keeps: charged until it is done.
      var arguments: [ChargedValue] = []
      arguments.reserveCapacity(Int(call.argumentCount))
      var i: Int32 = 1
      while i <= call.argumentCount {
        arguments.append(try call.chargedValue(i))
        i += 1
      }
      let charged = arguments
      return self.suspend(call, awaiting: "async call") {
        defer { withExtendedLifetime(charged) {} }
        return try await body(charged.map(\.value))
      }
    }
  }

  /// Runs Swift async work as the body of `task` (started now): its value
  /// finishes the task, a thrown error fails it, cancelling the task
  /// cancels the work (the task ends when the work does). The value counts
  /// against the memory limit until Lua has its copy; one that does not fit
  /// fails the task with `not enough memory`.
  public func runSwiftWork(_ task: LuaTask, _ work: @escaping @Sendable () async throws -> LuaValue) {
    task.status = .running
    if task.deadline?.passed == true {
      // Its deadline passed while it waited for its turn: it fails without
      // running. Later, not now: failing it now would start a queue's next
      // job inside this call.
      scheduler.later { [unowned scheduler] _ in scheduler.deadlinePassed(task) }
      return
    }
    let budget = memoryBudget
    let ticket = offLoopWork.start({ () async -> Result<ChargedValue, any Error> in
      do {
        return .success(try budget.hold(try await work()))
      } catch {
        return .failure(error)
      }
    }) { [unowned scheduler] result in
      switch result {
      case .success(let value): scheduler.finish(task, values: [value.value])
      case .failure(is CancellationError) where task.cancelRequested: scheduler.finishCancelledBeforeStart(task)
      case .failure(let error): scheduler.fail(task, message: String(describing: error))
      }
    }
    task.cancelHook = { [unowned offLoopWork] in offLoopWork.requestCancellation(ticket) }
  }

  /// What a waiting Lua caller gets for the outcome of Swift work.
  private func waitResult(for result: Result<ChargedValue, any Error>, location: String) -> WaitResult {
    switch result {
    case .success(let value):
      return .value(value)
    case .failure(let error) where LuaError.isNotEnoughMemory(error):
      return .notEnoughMemory
    case .failure(let error as LuaError):
      return .failure { L in
        if (try? LuaState(borrowing: L).push(error.value)) == nil { LuaState(borrowing: L).push(error.message) }
      }
    case .failure(is CancellationError):
      return scheduler.cancelledFailure()
    case .failure(let error):
      let prefix = location.isEmpty ? "" : location + ": "
      return .failure(message: prefix + String(describing: error))
    }
  }
}
