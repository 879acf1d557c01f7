/// The report busted's json output handler writes: one object with the
/// `successes`, `failures`, `errors` and `pendings` (each a result as
/// busted formats it: `name`, `message`, `element`, `trace`, `isError`)
/// and the run's `duration` in seconds.
public struct JSONReporter: SpecReporter {
  /// The `--seed` of a shuffled run, which busted gives as `randomseed`.
  let seed: Int64?

  public init(seed: Int64? = nil) { self.seed = seed }

  public func progress(_ file: SpecFileResult) -> String { "" }

  public func report(_ files: [SpecFileResult], seconds: Double) -> String {
    let entries = BustedEntry.all(files)
    func list(_ status: SpecResult.Status) -> OrderedJSON {
      .array(entries.filter { $0.result.status == status }.map(object))
    }
    let document = OrderedJSON.object([
      ("successes", list(.success)), ("failures", list(.failure)), ("errors", list(.error)),
      ("pendings", list(.pending)), ("duration", .number(seconds)),
    ])
    return document.text + "\n"
  }

  private func object(_ entry: BustedEntry) -> OrderedJSON {
    var fields: [(String, OrderedJSON)] = [("name", .string(entry.result.name))]
    if let message = entry.message { fields.append(("message", .string(message))) }
    if entry.result.status == .error { fields.append(("isError", .boolean(true))) }
    if let seed { fields.append(("randomseed", .integer(Int(seed)))) }
    fields.append(("element", element(entry)))
    fields.append(("trace", entry.trace.map(trace) ?? .object([])))
    return .object(fields)
  }

  private func element(_ entry: BustedEntry) -> OrderedJSON {
    let element = entry.element
    var fields: [(String, OrderedJSON)] = []
    if let name = element.name { fields.append(("name", .string(name))) }
    fields.append(("descriptor", .string(element.descriptor)))
    if let attributes = element.attributes {
      fields.append(("attributes", .object(attributes.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })))
    }
    fields.append(("trace", entry.elementTrace.map(trace) ?? .object([])))
    for (key, value) in [
      ("starttick", element.startTick), ("starttime", element.startTime), ("endtick", element.endTick),
      ("endtime", element.endTime), ("duration", element.duration),
    ] {
      if let value { fields.append((key, .number(value))) }
    }
    return .object(fields)
  }

  private func trace(_ trace: BustedEntry.Trace) -> OrderedJSON {
    let frame = trace.trace
    var fields: [(String, OrderedJSON)] = [
      ("source", .string(frame.source)), ("short_src", .string(frame.shortSource)), ("what", .string(frame.what)),
      ("linedefined", .integer(frame.lineDefined)), ("lastlinedefined", .integer(frame.lastLineDefined)),
      ("currentline", .integer(frame.currentLine)),
    ]
    switch trace.message {
    case .text(let text)?: fields.append(("message", .string(text)))
    case .object(let text)?: fields.append(("message", .object([("message", .string(text))])))
    case nil: break
    }
    if let traceback = frame.traceback { fields.append(("traceback", .string(traceback))) }
    return .object(fields)
  }
}
