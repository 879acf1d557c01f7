import LuaKit
import Synchronization

/// An action written in Swift: a small stateless unit of work, decoded from
/// its input (the action value is its input) and run against a context.
public protocol RunnableAction: Sendable, Decodable {
  /// What it returns; encoded back to Lua.
  associatedtype Output: Encodable & Sendable
  /// The name scripts run it by.
  static var name: String { get }
  /// The services it may use (`http`, `store`, `clock`, `log`, ...).
  static var uses: [String] { get }
  /// Does the work.
  func execute(in context: RunContext) async throws -> Output
}

extension RunnableAction {
  public static var uses: [String] { [] }
}

/// What an action runs against: only the services it declared, the chain
/// of actions that led here, analytics events and chaining.
public struct RunContext: Sendable {
  /// The running action's name.
  public let action: LuaString
  /// The actions that led here, outermost first, this one last (Lua
  /// actions among them are named by Lua's bytes).
  public let chain: [LuaString]
  let declared: [String]
  let runner: ActionRunner
  /// The step this action's journal calls belong to (see `Journal.Call`).
  let journalScope: LuaString?
  /// Which run of its durable job this is (1, then 2 after a worker was
  /// lost); 1 for an action run any other way.
  public let attempt: Int

  /// The service `name` as `T`; an error naming the action and the service
  /// if the action did not declare it.
  public func service<T>(_ name: String, as type: T.Type = T.self) throws -> T {
    guard declared.contains(name) else {
      throw ActionError.undeclaredService(action: action.description, service: name, declared: declared)
    }
    guard let service = runner.services.service(name, as: T.self) else {
      throw ActionError.missingService(action: action.description, service: name)
    }
    return service
  }

  /// The HTTP service (declare `http`).
  public var http: any HTTPService { get throws { try service("http", as: (any HTTPService).self) } }

  /// Runs another (Swift) action by name, with this chain.
  public func run(_ name: String, _ input: LuaValue) async throws -> LuaValue {
    try await runner.run(LuaString(name), input: input, chain: chain, journalScope: journalScope, attempt: attempt)
  }

  /// Adds an analytics event to this action's span.
  public func event(_ name: String, _ fields: [TraceEvent.Field] = []) {
    runner.emit("action.event", [.init("action", .string(action)), .init("event", .string(LuaString(name)))] + fields)
  }

  /// Seconds since the epoch on the runtime clock.
  public var now: Double { runner.now() }
}

/// Why an action could not run.
public enum ActionError: Error, Sendable, CustomStringConvertible, Equatable {
  case unknown(String)
  case undeclaredService(action: String, service: String, declared: [String])
  case missingService(action: String, service: String)
  case recursion(chain: [String], limit: Int)
  case badInput(action: String, reason: String)
  case failed(action: String, reason: String)

  public var description: String {
    switch self {
    case .unknown(let name): "unknown action '\(name)'"
    case .undeclaredService(let action, let service, let declared):
      "action '\(action)' did not declare service '\(service)' (it uses: \(declared.isEmpty ? "nothing" : declared.joined(separator: ", ")))"
    case .missingService(let action, let service): "action '\(action)': no service '\(service)' in this run"
    case .recursion(let chain, let limit): "action chain deeper than \(limit): \(chain.joined(separator: " → "))"
    case .badInput(let action, let reason): "action '\(action)': bad input: \(reason)"
    case .failed(let action, let reason): "action '\(action)' failed: \(reason)"
    }
  }
}

/// Runs Swift actions by name: decodes their input, checks the recursion
/// limit, records spans and the journal. Lua actions run in Lua (see
/// `lunar.action`), sharing these rules. Names are matched by their bytes,
/// as Lua matches them: a Swift action is found by its name's UTF-8.
public final class ActionRunner: Sendable {
  private let registry = Mutex<[LuaString: @Sendable (LuaValue, RunContext) async throws -> LuaValue]>([:])
  private let usesByName = Mutex<[LuaString: [String]]>([:])
  /// The services offered to actions.
  public let services: Services
  /// How deep a chain may go.
  public let recursionLimit: Int
  let now: @Sendable () -> Double
  let emit: @Sendable (String, [TraceEvent.Field]) -> Void
  /// Records or replays the run, if asked to.
  public let journal: Journal?

  /// A runner with services, a clock and a place to send span events.
  public init(
    services: Services, recursionLimit: Int = 32, journal: Journal? = nil, now: @escaping @Sendable () -> Double,
    emit: @escaping @Sendable (String, [TraceEvent.Field]) -> Void = { _, _ in }
  ) {
    self.services = services
    self.recursionLimit = recursionLimit
    self.journal = journal
    self.now = now
    self.emit = emit
  }

  /// Registers a Swift action type.
  public func register<A: RunnableAction>(_ type: A.Type) {
    let name = LuaString(A.name)
    registry.withLock { registry in
      registry[name] = { input, context in
        let action: A
        do {
          var decoder = LuaValueDecoder()
          decoder.rootName = "input"
          action = try decoder.decode(A.self, from: input)
        } catch {
          throw ActionError.badInput(action: A.name, reason: String(describing: error))
        }
        let output = try await action.execute(in: context)
        return try LuaValueEncoder().encode(output)
      }
    }
    usesByName.withLock { $0[name] = A.uses }
  }

  func usesNames(_ name: LuaString) -> [String] { usesByName.withLock { $0[name] ?? [] } }

  /// True if a Swift action called `name` (byte for byte) is registered.
  public func has(_ name: LuaString) -> Bool { registry.withLock { $0[name] != nil } }

  /// The names of the Swift actions, in byte order.
  public var names: [LuaString] { registry.withLock { $0.keys.sorted() } }

  /// Runs the Swift action `name` with `input`, below `chain`; its journal
  /// calls belong to the step `journalScope` (nil outside any step), and
  /// `attempt` is its durable job's attempt (1 otherwise).
  public func run(
    _ name: LuaString, input: LuaValue, chain: [LuaString] = [], journalScope: LuaString? = nil, attempt: Int = 1
  ) async throws -> LuaValue {
    let newChain = chain + [name]
    guard chain.count < recursionLimit else {
      throw ActionError.recursion(chain: newChain.map(\.description), limit: recursionLimit)
    }
    guard let body = registry.withLock({ $0[name] }) else { throw ActionError.unknown(name.description) }
    let uses = usesByName.withLock { $0[name] ?? [] }
    try journal?.step(kind: "action", key: ["name": .string(name), "input": input], in: journalScope)
    let started = now()
    emit("action.started", [.init("action", .string(name)), .init("depth", .integer(Int64(chain.count))), .init("input", .string(LuaString(Self.summary(input))))])
    do {
      let context = RunContext(
        action: name, chain: newChain, declared: uses, runner: self, journalScope: journalScope, attempt: attempt)
      let output = try await body(input, context)
      emit("action.finished", [.init("action", .string(name)), .init("duration", .number(now() - started))])
      try journal?.step(kind: "result", key: ["name": .string(name)], result: ["output": output], in: journalScope)
      return output
    } catch let error as ActionError {
      emit("action.failed", [.init("action", .string(name)), .init("error", .string(LuaString(error.description))), .init("duration", .number(now() - started))])
      throw error
    } catch {
      let failure = ActionError.failed(action: name.description, reason: String(describing: error))
      emit("action.failed", [.init("action", .string(name)), .init("error", .string(LuaString(failure.description))), .init("duration", .number(now() - started))])
      throw failure
    }
  }

  /// A short summary of an input for spans (first 80 characters).
  static func summary(_ value: LuaValue) -> String {
    let text = value.description
    return text.count > 80 ? String(text.prefix(77)) + "..." : text
  }
}
