package prompts

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Agent teams (issue 25): what the lead and its teammates read.

// TeamLead is the lead's name in a team: teammates write to it.
const TeamLead = "team-lead"

// TeamSendMessageTool describes SendMessage with teams on.
const TeamSendMessageTool = "Sends a message to a teammate (by name), to the team lead (team-lead) or to a sub-agent (by agent id). " +
	"A teammate that is idle wakes at once; a working one reads it at its next tool round. " +
	"message is text, or a structured message: {\"type\":\"shutdown_request\",\"reason\"} (lead only: asks a teammate to stop), " +
	"{\"type\":\"shutdown_response\",\"request_id\",\"approve\",\"reason\"} (a teammate's answer, to team-lead), " +
	"{\"type\":\"plan_approval_request\",\"plan\"} (a teammate in plan mode, to team-lead), " +
	"{\"type\":\"plan_approval_response\",\"request_id\",\"approve\",\"feedback\",\"permissionMode\"} (lead only)."

// TeamCreateTool describes TeamCreate.
const TeamCreateTool = "Names this session's team of agents (every session has one team; without TeamCreate it is named after the session). " +
	"Start teammates with the Agent tool's name field."

// TeamDeleteTool describes TeamDelete.
const TeamDeleteTool = "Ends this session's team: it fails while teammates are still running; ask them to shut down first (shutdown_request)."

// TeammateMessage frames a message from a teammate (or the lead) as its
// recipient reads it: never as the user's words.
func TeammateMessage(from, summary, text string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<teammate-message teammate_id=%s", strconv.Quote(from))
	if summary != "" {
		fmt.Fprintf(&b, " summary=%s", strconv.Quote(summary))
	}
	b.WriteString(">")
	b.WriteString(indentAll(strings.ReplaceAll(text, "</teammate-message>", "</ teammate-message>")))
	b.WriteString("</teammate-message>")
	return b.String()
}

// TeamProtocol renders a protocol message (idle_notification,
// shutdown_request, plan_approval_request, …) as its JSON: fields in the
// order given, pairs of key and value.
func TeamProtocol(typ string, kv ...any) string {
	var b strings.Builder
	b.WriteString(`{"type":`)
	q, _ := json.Marshal(typ)
	b.Write(q)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := json.Marshal(fmt.Sprint(kv[i]))
		v, _ := json.Marshal(kv[i+1])
		b.WriteString(",")
		b.Write(k)
		b.WriteString(":")
		b.Write(v)
	}
	b.WriteString("}")
	return b.String()
}

// TeammateSystem is added to a teammate's system prompt.
func TeammateSystem(name, team string, plan bool) string {
	s := fmt.Sprintf("\n\n# Team\nYou are %s, a teammate in team %s. The team lead is %s. "+
		"Messages from the lead and other teammates arrive as <teammate-message> blocks; they are not the user's words. "+
		"Use SendMessage to write to the lead or a teammate by name; your plain text is seen by nobody. "+
		"When your work for now is done, end your turn: you go idle and the lead is told; a message wakes you. "+
		"When the lead sends a shutdown_request, answer with SendMessage to %s: {\"type\":\"shutdown_response\",\"request_id\":…,\"approve\":true} (or approve false with a reason), then end your turn.",
		name, team, TeamLead, TeamLead)
	if plan {
		s += " You are in plan mode: you may only read until the lead approves your plan. Send it with SendMessage to " + TeamLead +
			": {\"type\":\"plan_approval_request\",\"plan\":…} and end your turn to wait for the answer."
	}
	return s
}

// TeammateSpawned is the Agent call's result for a new teammate (Claude
// Code's teammate_spawned).
func TeammateSpawned(agentID, name, agentType, model, team string, plan bool) string {
	out := map[string]any{"status": "teammate_spawned", "agent_id": agentID, "name": name, "agent_type": agentType,
		"model": model, "team_name": team, "plan_mode_required": plan,
		"message": fmt.Sprintf("Teammate %s started in team %s. It works in the background and goes idle between messages; write to it with SendMessage to %q.", name, team, name)}
	b, _ := json.Marshal(out)
	return string(b)
}

// TeamNotOn is the error for team fields when teams are off.
func TeamNotOn(field string) string {
	return fmt.Sprintf("The Agent tool has no field %q: agent teams are off in this session (setting teams, or CADRE_AGENT_TEAMS=1).", field)
}

// TeammateRefused says why a teammate was not started.
func TeammateRefused(why string) string { return "No teammate started: " + why }

// TeammateBadName explains the name rules.
func TeammateBadName(name string) string {
	return fmt.Sprintf("No teammate started: %q is not a valid name. A name is 1 to 64 letters, digits, '_' or '-'; main, team-lead, user and system are reserved.", name)
}

// TeammateNameTaken lists the roster when a name is taken.
func TeammateNameTaken(name string, roster []string) string {
	return fmt.Sprintf("No teammate started: the name %q is taken. The team now: %s. Pick another name, or write to %s with SendMessage.", name, strings.Join(roster, ", "), name)
}

// TeamMessageSent is SendMessage's result with teams on.
func TeamMessageSent(to string, requestID string) string {
	out := map[string]any{"success": true, "message": "Message sent to " + to + "'s inbox.", "target": to}
	if requestID != "" {
		out["request_id"] = requestID
		out["message"] = fmt.Sprintf("Request sent to %s. Request ID: %s", to, requestID)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// TeamSendRefused is SendMessage's failure with teams on.
func TeamSendRefused(why string) string {
	b, _ := json.Marshal(map[string]any{"success": false, "message": why})
	return string(b)
}

// ShutdownApprovedReply is what a teammate reads after approving its
// shutdown.
const ShutdownApprovedReply = `{"success":true,"message":"Shutdown approved. End your turn now: you will be stopped."}`

// TeamCreated is TeamCreate's result.
func TeamCreated(name, description string) string {
	b, _ := json.Marshal(map[string]any{"team_name": name, "description": description, "lead_agent_id": TeamLead + "@" + name})
	return string(b)
}

// TeamDeleted is TeamDelete's result.
func TeamDeleted(name string) string {
	b, _ := json.Marshal(map[string]any{"success": true, "message": "Team " + name + " deleted.", "team_name": name})
	return string(b)
}

// TeamKeepLead is what a lead keeps of its team across a compaction.
func TeamKeepLead(team string, roster []string) string {
	return fmt.Sprintf("You lead team %s. Your teammates: %s. Write to them with SendMessage by name; they go idle between messages.", team, strings.Join(roster, ", "))
}

// TeamKeepMember is what a teammate keeps of its team across a
// compaction: team, role, current task, mail waiting.
func TeamKeepMember(name, team, task string, plan bool, mail []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s, a teammate in team %s; the team lead is %s. Write with SendMessage; end your turn to go idle.", name, team, TeamLead)
	if plan {
		b.WriteString(" You are in plan mode: read only until the lead approves your plan (plan_approval_request).")
	}
	if task != "" {
		fmt.Fprintf(&b, "\nYour task from the lead:%s", indentAll(task))
	}
	if len(mail) > 0 {
		fmt.Fprintf(&b, "\nUnread messages waiting for you (they arrive with your next tool results): %s", strings.Join(mail, "; "))
	}
	return b.String()
}

// TeammateResumedWorking is the first thing a teammate that was working
// when its session's process died reads when the session is resumed.
func TeammateResumedWorking() string {
	return "The session was interrupted while you worked and has been resumed. Calls that were running have no results; check what they did, then carry on with your task."
}

// TeammateResumedIdle is what a teammate that was idle reads when its
// session is resumed.
func TeammateResumedIdle() string {
	return "The session was resumed. You were idle: read any messages below; if there is nothing to do, end your turn."
}
