import LuaKit

/// The steps a run is to run, in declaration order, and what each of them
/// needs: enough to draw the run's graph from the store alone. A
/// collection of the step names, so it reads like the list it replaced.
public struct RunPlan: Sendable, Equatable, RandomAccessCollection, ExpressibleByArrayLiteral {
  /// The steps' names, as bytes.
  public private(set) var names: [LuaString]
  /// For each step, the positions in `names` of the steps it needs; nil
  /// when not recorded (a run an older Lunar began).
  public private(set) var needs: [[Int]]?

  /// A plan of `names`, each needing the steps at the positions `needs`
  /// gives for it.
  /// - Throws: `StoreError.badValue` if `needs` does not give one list per
  ///   name, or names a position out of range or the step itself.
  public init(names: [LuaString], needs: [[Int]]?) throws(StoreError) {
    if let needs {
      guard needs.count == names.count else {
        throw StoreError(.badValue, "a plan of \(names.count) steps has needs for \(needs.count)")
      }
      for (step, stepNeeds) in needs.enumerated() {
        if let bad = stepNeeds.first(where: { $0 < 0 || $0 >= names.count || $0 == step }) {
          throw StoreError(.badValue, "step \(step + 1) of the plan needs step \(bad + 1), which is not another step of it")
        }
      }
    }
    self.names = names
    self.needs = needs
  }

  /// A plan of `names` whose needs were not recorded.
  public init(names: [LuaString]) {
    self.names = names
    needs = nil
  }

  /// A plan of the names listed, needs not recorded (for tests and older runs).
  public init(arrayLiteral names: LuaString...) {
    self.init(names: names)
  }

  /// The steps of `names` (a workflow's steps, in declaration order, each
  /// needing the positions `needs` gives) for which `keep` is true, the
  /// needs renumbered among them; a need on a step left out is dropped.
  public static func keeping(names: [LuaString], needs: [[Int]], where keep: (Int) -> Bool) -> RunPlan {
    let steps = names.indices.filter(keep)
    let kept = Dictionary(uniqueKeysWithValues: steps.enumerated().map { ($1, $0) })
    var plan = RunPlan(names: steps.map { names[$0] })
    plan.needs = steps.map { step in needs[step].compactMap { kept[$0] } }
    return plan
  }

  public var startIndex: Int { names.startIndex }
  public var endIndex: Int { names.endIndex }
  public subscript(position: Int) -> LuaString { names[position] }
}

extension RunPlan {
  /// `needs` as the store keeps them: one list of positions per step
  /// (LuaValueCodec), nil if not recorded.
  var neededValues: [LuaValue]? {
    needs.map { $0.map { stepNeeds in .table(LuaTable(array: stepNeeds.map { .integer(Int64($0)) })) } }
  }

  /// The plan of `names` whose needs are `values`, as `neededValues` gave
  /// them (nil: not recorded).
  init(names: [LuaString], neededValues values: [LuaValue]?) throws(StoreError) {
    guard let values else {
      self.init(names: names)
      return
    }
    var needs: [[Int]] = []
    needs.reserveCapacity(values.count)
    for value in values {
      guard let list = value.tableValue, list.fields.isEmpty else {
        throw StoreError(.badValue, "a step's needs are \(value.typeName), not a list of positions")
      }
      needs.append(
        try list.array.map { position throws(StoreError) in
          guard let number = position.integerValue, let index = Int(exactly: number) else {
            throw StoreError(.badValue, "a step's needs hold \(position.typeName), not a position")
          }
          return index
        })
    }
    try self.init(names: names, needs: needs)
  }
}

extension RunPlan {
  /// The plan as the two columns both SQL stores keep it in: the names,
  /// and the needs (nil when not recorded), each LuaValueCodec bytes.
  func columns() throws(StoreError) -> (names: [UInt8], needs: [UInt8]?) {
    do {
      return (
        try LuaValueCodec.encode(names.map { .string($0) }, root: "plan"),
        try neededValues.map { values throws in try LuaValueCodec.encode(values, root: "plan_needs") }
      )
    } catch {
      throw StoreError(.badValue, "the plan: \(error)")
    }
  }

  /// The plan of run `run` read back from its two columns in the store at
  /// `store` (no names: an empty plan).
  static func read(names: [UInt8]?, needs: [UInt8]?, store: String, run: RunID) throws(StoreError) -> RunPlan {
    guard let names else { return RunPlan() }
    do {
      let values = try needs.map { bytes throws in try LuaValueCodec.decode(bytes) }
      return try RunPlan(names: try LuaValueCodec.decode(names).compactMap(\.luaStringValue), neededValues: values)
    } catch {
      throw StoreError(.badValue, "store \(store): the plan of run \(run): \(error)")
    }
  }
}
