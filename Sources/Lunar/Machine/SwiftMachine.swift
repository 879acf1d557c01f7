import LuaKit

/// A machine written in Swift: an enum of states and a pure step. Driven by
/// the same mailbox driver as Lua machines; register it with
/// `RuntimeCore.registerMachine` (`MachineSystem.register`) and Lua creates
/// it with `machine.swift(name)`.
public protocol SwiftMachine: AnyObject {
  /// The states, named by their raw values.
  associatedtype State: RawRepresentable & CaseIterable & Hashable where State.RawValue == String
  /// The machine's name.
  var name: String { get }
  /// The state it starts in: entering it (its `enter`) is the first thing
  /// the machine does.
  var initial: State { get }
  /// Handles `message` in `state`: nil if unhandled; `next` nil to stay,
  /// or a state to transition to (`state` itself re-enters it: exit, enter).
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

/// Presents a `SwiftMachine` to the driver: its states are numbered in
/// `allCases` order.
final class SwiftMachineBehavior<Machine: SwiftMachine>: MachineBehavior {
  let machine: Machine
  private let cases: [Machine.State]
  private let positions: [Machine.State: Int]
  let states: [LuaString]
  let initial: Int
  let name: LuaString

  init(_ machine: Machine) {
    self.machine = machine
    cases = Array(Machine.State.allCases)
    positions = Dictionary(uniqueKeysWithValues: cases.enumerated().map { ($1, $0) })
    states = cases.map { LuaString($0.rawValue) }
    initial = positions[machine.initial]!
    name = LuaString(machine.name)
  }

  var strict: Bool { false }
  var edges: [(from: LuaString, message: LuaString, to: LuaString)] { [] }

  func step(_ state: Int, _ message: MachineMessage, on lua: LuaState) throws -> (next: Int?, commands: [Command])? {
    guard let (next, commands) = machine.receive(message, in: cases[state]) else { return nil }
    return (next.map { positions[$0]! }, commands)
  }

  func enter(_ state: Int, on lua: LuaState) throws -> [Command] { machine.enter(cases[state]) }

  func exit(_ state: Int, on lua: LuaState) throws -> [Command] { machine.exit(cases[state]) }
}

extension RuntimeCore {
  /// Registers a Swift machine type by its name.
  public func registerMachine<Machine: SwiftMachine>(_ name: String, _ make: @escaping () -> Machine) {
    registerMachine(name) { SwiftMachineBehavior(make()) as any MachineBehavior }
  }
}
