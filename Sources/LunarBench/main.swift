// Benchmarks: each prints its figure beside a baseline measured in the same
// run, as a ratio. Run through scripts/bench (release build).
BenchmarkSuite.main(arguments: CommandLine.arguments)
