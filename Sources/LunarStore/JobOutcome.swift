/// How a job ended, as its worker reports it.
public enum JobOutcome: Sendable, Equatable {
  /// It returned `output` (LuaValueCodec bytes of the values returned).
  case succeeded(output: [UInt8])
  /// It raised `error` (the bytes of the error message, or of an encoded
  /// error value: the store keeps them exactly).
  case failed(error: [UInt8])

  /// The status the job ends in.
  public var status: JobStatus {
    switch self {
    case .succeeded: .succeeded
    case .failed: .failed
    }
  }
}
