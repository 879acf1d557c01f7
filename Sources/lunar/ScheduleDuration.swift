/// A duration as `--catchup` takes it: a number of seconds (`90`), or
/// numbers with units `s`, `m`, `h`, `d` (`15m`, `1h30m`, `2d`).
enum ScheduleDuration {
  /// The microseconds `text` means, or nil if it is not a duration of
  /// more than 0 and at most 366 days.
  static func microseconds(_ text: String) -> Int64? {
    if let seconds = Double(text) { return checked(seconds) }
    var total = 0.0
    var number = ""
    for character in text {
      if character.isASCII && (character.isNumber || character == ".") {
        number.append(character)
        continue
      }
      let unit: Double
      switch character {
      case "s": unit = 1
      case "m": unit = 60
      case "h": unit = 3600
      case "d": unit = 86_400
      default: return nil
      }
      guard let value = Double(number) else { return nil }
      total += value * unit
      number = ""
    }
    guard number.isEmpty, !text.isEmpty else { return nil }
    return checked(total)
  }

  private static func checked(_ seconds: Double) -> Int64? {
    guard seconds.isFinite, seconds > 0, seconds <= 366 * 86_400 else { return nil }
    return Int64((seconds * 1_000_000).rounded())
  }
}
