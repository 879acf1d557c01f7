/// Hands every event on to a file sink that several runtimes share, with
/// one field in front (`file` and the spec file each runtime runs), so the
/// runtimes' events in that file tell themselves apart.
public final class TaggedTraceSink: FileWritingSink {
  private let sink: any FileWritingSink
  private let tag: TraceEvent.Field

  /// A sink that gives `sink` every event with `tag` as its first field.
  public init(_ sink: any FileWritingSink, tag: TraceEvent.Field) {
    self.sink = sink
    self.tag = tag
  }

  public var output: FileOutput { sink.output }

  public func receive(_ event: TraceEvent) {
    sink.receive(
      TraceEvent(sequence: event.sequence, time: event.time, kind: event.kind, fields: [tag] + event.fields, task: event.task))
  }
}
