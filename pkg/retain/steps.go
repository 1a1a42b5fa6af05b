package retain

// StepName is the file name, inside a run's StepsDir, of the lookup-budget
// ledger of a step.
func StepName(step ID) string { return string(step) + ".json" }
