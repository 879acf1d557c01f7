import LuaKit

/// A piece of what one attempt of a step printed, as the store keeps it:
/// bytes written to one stream, in order within the attempt (`sequence`).
public struct StepLogChunk: Sendable, Equatable {
  /// The step's name, as bytes.
  public var step: LuaString
  /// The step's place in the workflow's declaration order, from 0.
  public var position: Int
  /// Which attempt of the step printed it, from 1.
  public var attempt: Int
  /// Its place among the attempt's chunks, from 1.
  public var sequence: Int
  /// The stream it was written to.
  public var stream: StepLogStream
  /// What was written, byte for byte.
  public var bytes: [UInt8]
  /// Its place among all the chunks of its run in the order they were
  /// stored (0 until stored): `runs logs --follow` reads on from it.
  public var id: Int64

  /// A chunk with every field given.
  public init(
    step: LuaString, position: Int, attempt: Int, sequence: Int, stream: StepLogStream, bytes: [UInt8], id: Int64 = 0
  ) {
    self.step = step
    self.position = position
    self.attempt = attempt
    self.sequence = sequence
    self.stream = stream
    self.bytes = bytes
    self.id = id
  }
}
