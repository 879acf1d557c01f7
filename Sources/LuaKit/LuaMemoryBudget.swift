import CLuaShim

/// A state's memory limit as Swift code shares it: the bytes of the copies
/// Swift holds of Lua values count with Lua's own, and a copy that would
/// pass the limit is refused with Lua's own `not enough memory`. Sendable,
/// so work on other threads can charge what it builds for Lua; the budget
/// (and every charge) outlives the state if it must.
public final class LuaMemoryBudget: @unchecked Sendable {
  // Safe: the control block is retained for this object's life
  // (lunar_retaincontrol keeps it past lunar_close), and the functions used
  // on it here only touch its immutable limit and its C11 atomics.
  private let control: OpaquePointer

  /// The budget of the state (or thread) `L`.
  public init(_ L: OpaquePointer) {
    control = lunar_retaincontrol(lunar_control(L))
  }

  deinit { lunar_releasecontrol(control) }

  /// The limit in bytes; 0 when there is none (nothing is then charged).
  public var limit: Int { Int(lunar_memorylimitof(control)) }

  /// True when the state has a memory limit.
  public var isLimited: Bool { lunar_memorylimitof(control) != 0 }

  /// Bytes Swift holds now in charged copies.
  public var held: Int { Int(lunar_memoryheld(control)) }

  /// Bytes that may still be charged or allocated (`Int.max` without a limit).
  public var available: Int { Int(clamping: lunar_memoryavailable(control)) }

  /// Charges `bytes` Swift is about to hold; nil when there is no limit.
  /// - Throws: `LuaError.notEnoughMemory` if they would pass the limit.
  public func charge(_ bytes: Int) throws(LuaError) -> LuaMemoryCharge? {
    guard isLimited else { return nil }
    guard let charge = LuaMemoryCharge(control: control, bytes: bytes, force: false) else {
      throw LuaError.notEnoughMemory
    }
    return charge
  }

  /// Charges `bytes` Swift already holds and cannot give up (a trace sink
  /// keeping an event): over the limit, Lua's next allocation fails instead.
  /// Nil when there is no limit.
  public func chargeAnyway(_ bytes: Int) -> LuaMemoryCharge? {
    guard isLimited else { return nil }
    return LuaMemoryCharge(control: control, bytes: bytes, force: true)
  }

  /// `value` with its charge (see `LuaValue.estimatedSize`).
  /// - Throws: `LuaError.notEnoughMemory` if it does not fit.
  public func hold(_ value: LuaValue) throws(LuaError) -> ChargedValue {
    guard isLimited else { return ChargedValue(value) }
    return ChargedValue(value, charge: try charge(value.estimatedSize))
  }
}

/// Bytes charged against a state's memory limit, given back when the last
/// owner lets go (on any thread, even after the state is closed).
public final class LuaMemoryCharge: @unchecked Sendable {
  // Safe: as for LuaMemoryBudget: retained here, used only through atomics.
  private let control: OpaquePointer
  /// The bytes charged.
  public let bytes: Int

  /// Charges `bytes` on `control`; nil if refused (only without `force`).
  init?(control: OpaquePointer, bytes: Int, force: Bool) {
    guard lunar_charge(control, bytes, force ? 1 : 0) != 0 else { return nil }
    self.control = control
    self.bytes = bytes
    _ = lunar_retaincontrol(control)
  }

  deinit {
    lunar_uncharge(control, bytes)
    lunar_releasecontrol(control)
  }
}

/// A copy of a Lua value held by Swift, counted against the state's memory
/// limit for as long as any copy of it lives.
public struct ChargedValue: Sendable {
  /// The value.
  public let value: LuaValue
  /// Its charge; nil when the state has no limit (or Swift made the value).
  public let charge: LuaMemoryCharge?

  /// `value`, charged by `charge` (nil: not charged).
  public init(_ value: LuaValue, charge: LuaMemoryCharge? = nil) {
    self.value = value
    self.charge = charge
  }
}

extension LuaError {
  /// Lua's own memory error, as a failed allocation raises it.
  public static var notEnoughMemory: LuaError { LuaError(kind: .memory, message: "not enough memory") }

  /// True for errors that mean the memory limit was reached: a memory
  /// `LuaError` or a value that could not cross for lack of memory. A host
  /// function throwing one raises Lua's own memory error.
  public static func isNotEnoughMemory(_ error: any Error) -> Bool {
    switch error {
    case let error as LuaError: error.kind == .memory
    case let error as LuaConversionError: error.reason == .notEnoughMemory
    default: false
    }
  }
}

extension LuaState {
  /// The budget Swift code charges its copies of this state's values to.
  public var memoryBudget: LuaMemoryBudget { LuaMemoryBudget(L) }
}
