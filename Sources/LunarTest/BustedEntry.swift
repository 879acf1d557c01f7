/// One result as busted's output handlers format it (base.lua's `format`):
/// the message with the failure's position in front, the trace (where it
/// was raised, else where it was declared) and the element.
struct BustedEntry {
  /// What a trace's `message` holds: the error value itself (a string), or
  /// a failure's or pending's table with its `message` field.
  enum TraceMessage: Equatable {
    case text(String)
    case object(String)
  }

  /// A trace with the message busted puts in it.
  struct Trace: Equatable {
    var trace: SpecTrace
    var message: TraceMessage?
  }

  let result: SpecResult
  /// busted's message: none for a success or a pending block.
  let message: String?
  /// Where the failure was raised, else where the element was declared;
  /// nil when busted has neither (a file that cannot be loaded).
  let trace: Trace?
  /// The element, with a trace: where it was declared, else the failure's.
  let element: SpecElement
  let elementTrace: Trace?
  /// True when the trace is the failure's, not the element's.
  let raised: Bool

  init(_ result: SpecResult) {
    self.result = result
    // A result made without details is taken for a test's.
    let element = result.element ?? SpecElement(name: result.name, descriptor: "it")
    self.element = element
    let declared = element.trace.map { Trace(trace: $0, message: element.name.map(TraceMessage.text)) }
    var failure: Trace?
    var message: String?
    if var frame = result.frame {
      if let traceback = result.traceback { frame.traceback = Self.tracebackFromFrame(traceback) }
      let raw = result.message ?? ""
      let located = Self.hasPosition(raw) ? raw : "\(frame.shortSource):\(frame.currentLine): \(raw)"
      message = located
      switch result.status {
      case .failure: failure = Trace(trace: frame, message: .object(located))
      case .pending: failure = Trace(trace: frame, message: .object(raw))
      default: failure = Trace(trace: frame, message: .text(raw))
      }
    } else if result.status == .failure || result.status == .error, let raw = result.message {
      if let position = result.position, !Self.hasPosition(raw) { message = "\(position): \(raw)" } else { message = raw }
    }
    self.message = message
    trace = failure ?? declared
    elementTrace = declared ?? failure
    raised = failure != nil
  }

  /// True for a file that could not be loaded, which busted reports with a
  /// bare element (no attributes). busted loads every file before it runs
  /// any, so its reports give these first.
  var isLoadFailure: Bool { element.descriptor == "file" && element.attributes == nil }

  /// The entries of a run's results in the order busted reports them:
  /// files that could not be loaded, then the rest as they happened.
  static func all(_ files: [SpecFileResult]) -> [BustedEntry] {
    let entries = files.flatMap(\.results).filter { $0.status != .listed }.map(BustedEntry.init)
    return entries.filter(\.isLoadFailure) + entries.filter { !$0.isLoadFailure }
  }

  /// A task's traceback as busted's trace gives one: from the frame that
  /// raised (past the C functions above it) down to the first C function.
  static func tracebackFromFrame(_ traceback: String) -> String {
    let lines = traceback.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
    let frames = lines.drop { $0.hasPrefix("\t[C]") }.prefix { !$0.hasPrefix("\t[C]") }
    return "\nstack traceback:\n" + frames.map { $0 + "\n" }.joined()
  }

  /// busted's test for a message that already says where
  /// (`^[^\n]-:%d+: `): its first line has `:LINE: ` in it.
  static func hasPosition(_ message: String) -> Bool {
    var rest = message.prefix { $0 != "\n" }[...]
    while let colon = rest.firstIndex(of: ":") {
      let after = rest[rest.index(after: colon)...]
      let digits = after.prefix { $0.isASCII && $0.isNumber }
      if !digits.isEmpty && after.dropFirst(digits.count).hasPrefix(": ") { return true }
      rest = after
    }
    return false
  }
}
