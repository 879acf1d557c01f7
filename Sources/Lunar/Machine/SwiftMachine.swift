import LuaKit

/// A machine written in Swift: an enum of states and a pure step. Driven by
/// the same mailbox driver as Lua machines; register it with
/// `RuntimeCore.registerMachine` and Lua creates it with `machine.swift(name)`.
public protocol SwiftMachine: AnyObject {
  /// The states, named by their raw values.
  associatedtype State: RawRepresentable & CaseIterable & Hashable where State.RawValue == String
  /// The machine's name.
  var name: String { get }
  /// The state it starts in.
  var initial: State { get }
  /// Handles `message` in `state`: nil if unhandled; `next` nil to stay.
  func receive(_ message: MachineMessage, in state: State) -> (next: State?, commands: [Command])?
  /// Commands issued on entering `state`.
  func enter(_ state: State) -> [Command]
  /// Commands issued on leaving `state`.
  func exit(_ state: State) -> [Command]
}

extension SwiftMachine {
  public func enter(_ state: State) -> [Command] { [] }
  public func exit(_ state: State) -> [Command] { [] }
}

/// Presents a `SwiftMachine` to the driver.
final class SwiftMachineBehavior<Machine: SwiftMachine>: MachineBehavior {
  let machine: Machine
  init(_ machine: Machine) { self.machine = machine }

  var name: String { machine.name }
  var states: [String] { Machine.State.allCases.map(\.rawValue) }
  var initial: String { machine.initial.rawValue }
  var strict: Bool { false }
  var edges: [(from: String, message: String, to: String)] { [] }

  func step(_ state: String, _ message: MachineMessage, on L: OpaquePointer) throws -> (next: String?, commands: [Command])? {
    guard let current = Machine.State(rawValue: state) else { throw MachineError("machine '\(name)': unknown state '\(state)'") }
    guard let (next, commands) = machine.receive(message, in: current) else { return nil }
    return (next?.rawValue, commands)
  }

  func enter(_ state: String, on L: OpaquePointer) throws -> [Command] {
    Machine.State(rawValue: state).map(machine.enter) ?? []
  }

  func exit(_ state: String, on L: OpaquePointer) throws -> [Command] {
    Machine.State(rawValue: state).map(machine.exit) ?? []
  }
}

extension RuntimeCore {
  /// Registers a Swift machine type by its name.
  public func registerMachine<Machine: SwiftMachine>(_ name: String, _ make: @escaping () -> Machine) {
    registerMachine(name) { SwiftMachineBehavior(make()) as any MachineBehavior }
  }
}
