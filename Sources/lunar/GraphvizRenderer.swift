import LuaKit
import Lunar

/// Graphviz's `dot` (on `PATH`; `scripts/bootstrap` installs it), which
/// turns the DOT drawings `lunar graph` makes into one SVG picture.
enum GraphvizRenderer {
  /// Why there is no picture, in one line for the user.
  struct Failure: Error, Sendable, CustomStringConvertible {
    let description: String
  }

  /// The SVG of `drawings`: `dot -Tsvg`'s own document for one drawing,
  /// several stacked in one document (each as `dot` drew it, its ids
  /// prefixed `drawingN_` so that they stay unique).
  static func svg(_ drawings: [LuaString]) throws(Failure) -> [UInt8] {
    var documents: [[UInt8]] = []
    for (index, drawing) in drawings.enumerated() {
      let arguments = drawings.count == 1 ? ["-Tsvg"] : ["-Tsvg", "-Gid=drawing\(index + 1)"]
      let outcome: FilterProcess.Outcome
      do {
        outcome = try FilterProcess.run("dot", arguments, input: drawing.bytes)
      } catch {
        if error.isMissing {
          throw Failure(description: "cannot draw SVG: Graphviz's dot is not on PATH (install Debian's graphviz package)")
        }
        throw Failure(description: "cannot start Graphviz's dot: \(error.reason)")
      }
      guard outcome.status == 0, !outcome.output.isEmpty else {
        throw Failure(description: "dot -Tsvg failed (exit status \(outcome.status))" + said(outcome.errors))
      }
      // A warning does not stop the picture, but the user sees it.
      if !outcome.errors.isEmpty { Console.error(String(decoding: outcome.errors, as: UTF8.self).trimmedLines) }
      documents.append(outcome.output)
    }
    guard documents.count > 1 else { return documents.first ?? [] }
    do {
      return try SVGStack.stacking(documents)
    } catch {
      throw Failure(description: "cannot stack dot's pictures: \(error.reason)")
    }
  }

  /// What `dot` said on standard error, after a colon, on one line.
  private static func said(_ errors: [UInt8]) -> String {
    let text = String(decoding: errors, as: UTF8.self).trimmedLines
    return text.isEmpty ? "" : ": " + text.split(separator: "\n").joined(separator: "; ")
  }
}

extension String {
  /// The text without blank lines or spaces at the ends of its lines.
  fileprivate var trimmedLines: String {
    let blank: Set<Character> = [" ", "\t", "\r"]
    return split(separator: "\n")
      .map { $0.drop { blank.contains($0) }.reversed().drop { blank.contains($0) }.reversed() }
      .filter { !$0.isEmpty }.map { String($0) }.joined(separator: "\n")
  }
}
