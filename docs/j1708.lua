-- j1708.lua: a Wireshark dissector for the J1708 and J2497 messages
-- fieldtap records (docs/recorder.md). fieldtap writes a J1708 port's
-- messages on LINKTYPE_USER0 (147) and J2497 (PLC4TRUCKS) on
-- LINKTYPE_USER1 (148): each frame is one message, MID, data, checksum.
--
-- Use: wireshark -X lua_script:j1708.lua fieldtap_00001_20261201080000.pcapng
--      tshark -X lua_script:j1708.lua -r SEGMENT -Y j1708 -T fields -e j1708.mid -e j1708.pid
-- or copy it into Wireshark's personal plugins folder (Help > About >
-- Folders). Filter fields: j1708.mid, j1708.pid, j1708.value,
-- j1708.checksum, j1708.checksum.status, j1708.j2497.
--
-- Data is J1587 parameters when the MID is 128 or above (SAE J1587
-- Appendix A): PID 0-127 carry one byte, 128-191 two, 192-253 a length
-- byte and that many bytes, 254 the rest of the message, 255 escapes to
-- page 2 (shown as PID 256 + the next byte). MIDs below 128 are
-- J1708-reserved layouts and are shown as bytes.

local j1708 = Proto("j1708", "SAE J1708 message")

-- A few MIDs (SAE J1587); fieldtap's services/j1587 names all of them.
local mids = {
    [128] = "Engine #1", [130] = "Transmission", [136] = "Brakes, Power Unit",
    [137] = "Brakes, Trailer #1", [140] = "Instrument Cluster", [142] = "Vehicle Management System",
    [144] = "Cruise Control", [145] = "Road Speed Indicator", [172] = "Off-board Diagnostics #1",
    [175] = "Engine #2", [180] = "Off-board Diagnostics #2",
}

local f = {
    mid      = ProtoField.uint8("j1708.mid", "MID", base.DEC, mids),
    j2497    = ProtoField.bool("j1708.j2497", "J2497 (power line)"),
    param    = ProtoField.none("j1708.param", "Parameter"),
    pid      = ProtoField.uint16("j1708.pid", "PID", base.DEC),
    len      = ProtoField.uint8("j1708.pid.length", "Length", base.DEC),
    value    = ProtoField.bytes("j1708.value", "Value"),
    data     = ProtoField.bytes("j1708.data", "Data"),
    checksum = ProtoField.uint8("j1708.checksum", "Checksum", base.HEX),
    status   = ProtoField.string("j1708.checksum.status", "Checksum status"),
}
j1708.fields = { f.mid, f.j2497, f.param, f.pid, f.len, f.value, f.data, f.checksum, f.status }

local e_checksum = ProtoExpert.new("j1708.checksum.bad", "Checksum does not sum to zero", expert.group.CHECKSUM, expert.severity.ERROR)
local e_length = ProtoExpert.new("j1708.length.bad", "Message outside 2 to 21 bytes", expert.group.MALFORMED, expert.severity.ERROR)
local e_trunc = ProtoExpert.new("j1708.pid.truncated", "Parameter runs past the message", expert.group.MALFORMED, expert.severity.WARN)
j1708.experts = { e_checksum, e_length, e_trunc }

local function dissect(tvb, pinfo, tree, j2497)
    local n = tvb:len()
    pinfo.cols.protocol = j2497 and "J2497" or "J1708"
    local t = tree:add(j1708, tvb())
    t:add(f.j2497, j2497)
    if n < 2 or n > 21 then
        t:add_proto_expert_info(e_length)
        return n
    end
    local mid = tvb(0, 1):uint()
    t:add(f.mid, tvb(0, 1))
    local sum = 0
    for i = 0, n - 1 do sum = (sum + tvb(i, 1):uint()) % 256 end
    local ck = t:add(f.checksum, tvb(n - 1, 1))
    if sum == 0 then
        t:add(f.status, "Good")
    else
        t:add(f.status, "Bad")
        ck:add_proto_expert_info(e_checksum)
    end
    local info = "MID " .. mid
    if mids[mid] then info = info .. " " .. mids[mid] end
    if mid < 128 then
        if n > 2 then t:add(f.data, tvb(1, n - 2)) end
        pinfo.cols.info = info
        return n
    end
    local pids = {}
    local i, last = 1, n - 1 -- data is [1, last)
    while i < last do
        local start, pid, page = i, tvb(i, 1):uint(), 0
        if pid == 255 and i + 1 < last then
            page, i = 256, i + 1
            pid = tvb(i, 1):uint()
        end
        local at, len = i + 1, 0
        if pid < 128 then len = 1
        elseif pid < 192 then len = 2
        elseif pid < 254 then
            if at >= last then len = -1 else len = tvb(at, 1):uint(); at = at + 1 end
        else len = last - at end
        local p = t:add(f.param, tvb(start, math.max(1, math.min(at + math.max(len, 0), last) - start)))
        p:add(f.pid, tvb(start, at - start), page + pid)
        p:set_text("PID " .. (page + pid))
        if len < 0 or at + len > last then
            p:add_proto_expert_info(e_trunc)
            pids[#pids + 1] = tostring(page + pid) .. "?"
            break
        end
        if pid >= 192 and pid < 254 then p:add(f.len, tvb(at - 1, 1)) end
        if len > 0 then p:add(f.value, tvb(at, len)) end
        pids[#pids + 1] = tostring(page + pid)
        i = at + len
    end
    pinfo.cols.info = info .. ": PID " .. table.concat(pids, ", ")
    return n
end

local j1708_user0 = Proto("j1708.user0", "J1708 on LINKTYPE_USER0")
function j1708_user0.dissector(tvb, pinfo, tree) return dissect(tvb, pinfo, tree, false) end
local j2497_user1 = Proto("j1708.user1", "J2497 on LINKTYPE_USER1")
function j2497_user1.dissector(tvb, pinfo, tree) return dissect(tvb, pinfo, tree, true) end

-- Wireshark 4.2 renamed the encapsulation table wtap_encaps; 4.0 has wtap.
local encaps = wtap_encaps or wtap
local t = DissectorTable.get("wtap_encap")
t:add(encaps.USER0, j1708_user0)
t:add(encaps.USER1, j2497_user1)
