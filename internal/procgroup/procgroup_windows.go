package procgroup

import (
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Group is the Job object the command runs in; its children are in it
// too (a process's children join its job), unless they leave it on
// purpose (CREATE_BREAKAWAY_FROM_JOB, where the job allows it), as a
// process that calls setsid(2) leaves a Unix process group.
type Group struct {
	mu      sync.Mutex
	job     windows.Handle // 0: no job could be made; only the process is reached
	process windows.Handle // the command's own, for a group without a job
}

// prepare makes the command start suspended, so that started can put it
// in its job before it runs a single instruction (a child it started
// first would escape the job). With dieWithParent, the job ends every
// process in it when retval dies, however it dies, until CommandExited:
// Windows' answer to Linux's parent-death signal, and one that reaches
// the command's children too.
func prepare(a *syscall.SysProcAttr, dieWithParent bool) {
	a.CreationFlags |= windows.CREATE_SUSPENDED
}

var procNtResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

func started(cmd *exec.Cmd, kill bool) (*Group, error) {
	g := &Group{}
	var herr error
	err := cmd.Process.WithHandle(func(h uintptr) {
		var cur windows.Handle = windows.CurrentProcess()
		herr = windows.DuplicateHandle(cur, windows.Handle(h), cur, &g.process, 0, false, windows.DUPLICATE_SAME_ACCESS)
	})
	if err == nil {
		err = herr
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	if job, err := windows.CreateJobObject(nil, nil); err == nil {
		if setLimits(job, kill) == nil && windows.AssignProcessToJobObject(job, g.process) == nil {
			g.job = job
		} else {
			windows.CloseHandle(job)
		}
	}
	// The process was created suspended: let it run, in its job (or,
	// where none could be made, alone).
	if r, _, _ := procNtResumeProcess.Call(uintptr(g.process)); r != 0 {
		g.Close()
		cmd.Process.Kill()
		cmd.Wait()
		return nil, windows.NTStatus(r)
	}
	return g, nil
}

// setLimits lets processes of the job leave it when they ask
// (CREATE_BREAKAWAY_FROM_JOB, as a Unix daemon leaves its group), and,
// with kill, ends them all when the job's last handle (retval's) closes.
func setLimits(job windows.Handle, kill bool) error {
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK
	if kill {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	}
	_, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	return err
}

// Signal ends every process of the group for SIGKILL and SIGTERM (with
// exit status Killed, or 128+15), and does nothing for other signals:
// Windows cannot deliver them, and a console's Ctrl+C has reached the
// command already.
func (g *Group) Signal(sig syscall.Signal) {
	if sig != syscall.SIGKILL && sig != syscall.SIGTERM {
		return
	}
	code := uint32(128 + int(sig))
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job != 0 {
		windows.TerminateJobObject(g.job, code)
		return
	}
	if g.process != 0 {
		windows.TerminateProcess(g.process, code)
	}
}

// CommandExited says the command itself has exited: processes it left
// behind keep running, as on Unix, so the job no longer ends them when
// retval exits.
func (g *Group) CommandExited() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job != 0 {
		setLimits(g.job, false)
	}
}

// Close lets the group go. Processes still in it keep running unless
// CommandExited was never called on a job made with dieWithParent.
func (g *Group) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job != 0 {
		windows.CloseHandle(g.job)
		g.job = 0
	}
	if g.process != 0 {
		windows.CloseHandle(g.process)
		g.process = 0
	}
}
