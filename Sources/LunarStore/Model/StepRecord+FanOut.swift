import LuaKit

extension StepRecord {
  /// `k` for a fan-out child's name `step[k]`; nil for another name.
  public static func childIndex(of name: LuaString) -> Int? {
    let bytes = name.bytes
    guard bytes.last == UInt8(ascii: "]"), let open = bytes.lastIndex(of: UInt8(ascii: "[")), open > 0 else { return nil }
    let digits = bytes[(open + 1)..<(bytes.count - 1)]
    guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
  }

  /// `steps` ordered by position, each position's fan-out children after
  /// its step in item order (`x[2]` before `x[10]`), as `lunar runs show`
  /// and a run's page list them.
  public static func inItemOrder(_ steps: [StepRecord]) -> [StepRecord] {
    steps.enumerated().sorted { a, b in
      let (left, right) = (a.element, b.element)
      if left.position != right.position { return left.position < right.position }
      let (i, j) = (childIndex(of: left.name) ?? 0, childIndex(of: right.name) ?? 0)
      return i != j ? i < j : a.offset < b.offset
    }.map(\.element)
  }
}
