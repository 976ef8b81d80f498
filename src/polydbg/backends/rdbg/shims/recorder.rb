# polydbg's call and exception recorder, run inside a Ruby program under rdbg (backends/rdbg/calls.py).
# Defined once per program (through TOPLEVEL_BINDING.eval at a stop), armed and disarmed by later evaluations.
# Records go to polydbg over a UNIX socket as JSON lines, batched: flushed at 256 records, 50 ms after the last
# flush (checked as records come), at a disarm and at the program's end. It never raises into the program.
module ::PolydbgRecorder
  LOCK = ::Thread::Mutex.new
  CONF = ::RbConfig::CONFIG
  LIBS = [CONF['rubylibdir'], CONF['rubyarchdir'], CONF['vendordir'], CONF['sitedir'], CONF['vendorlibdir'],
          CONF['sitelibdir'], *(::Gem.path rescue []), (::Gem.dir rescue nil),
          (::Bundler.bundle_path.to_s rescue nil)].compact.reject(&:empty?).uniq.map { |d| d.end_with?('/') ? d : "#{d}/" }
  DEBUGGER = (::File.dirname(::DEBUGGER__::SESSION.method(:add_bp).source_location[0]) + '/' rescue '/nonexistent/')
  FLUSH_S = 0.05
  CALLER = 3 # the frames above a hook's method to the call site
  BATCH = 256
  @out = nil
  @pid = nil
  @buf = []
  @at = 0.0
  @seq = 0
  @gen = 0
  @calls = nil
  @raised = nil
  @open = {}.compare_by_identity
  @pending = {}
  @user = {}
  @threads = ::ObjectSpace::WeakMap.new
  @tps = []

  class << self
    # the lock for an arm or disarm, evaluated at a stop. rdbg's pause is a signal trap: its stop may be inside a hook
    # holding the lock (then it is this thread's already), and a trap's context cannot wait for a lock (taken if free)
    def sync
      return yield if LOCK.owned?
      locked = begin
        LOCK.lock
      rescue ::ThreadError
        LOCK.try_lock
      end
      begin
        yield
      ensure
        LOCK.unlock if locked
      end
    end

    def clock = ::Process.clock_gettime(::Process::CLOCK_MONOTONIC)

    def user?(path)
      return false if path.nil?
      found = @user[path]
      return found unless found.nil?
      @user[path] = !(path.start_with?('<', '(') || path.start_with?(DEBUGGER) || LIBS.any? { |d| path.start_with?(d) })
    end

    # a value's inspect cut to chars; a long String, Array or Hash is cut before its inspect (which would be as long)
    def text(value, chars)
      s = begin
        case value
        when ::String then value.length > chars ? value[0, chars].inspect : value.inspect
        when ::Array then value.length > chars ? "#{value.first(chars).inspect[0..-2]}, … (#{value.length})]" : value.inspect
        when ::Hash then value.size > chars ? "#{value.first(chars).to_h.inspect[0..-2]}, … (#{value.size})}" : value.inspect
        else value.inspect
        end
      rescue ::Exception
        "#<#{(value.class rescue '?')}>"
      end
      s = s.to_s
      s.length > chars ? "#{s[0, chars]}…" : s
    end

    def raised_text(exc, chars) = text_of("#{exc.class.name}: #{exc.message}", chars)

    def text_of(s, chars) = s.length > chars ? "#{s[0, chars]}…" : s

    def thread_name
      th = ::Thread.current
      name = @threads[th]
      return name if name
      tc = (::DEBUGGER__::SESSION.instance_variable_get(:@th_clients)[th] rescue nil)
      label = th.name || (th == ::Thread.main ? 'main' : nil)
      return label || "thread #{th.object_id}" unless tc # rdbg has not met it yet: asked again next time

      @threads[th] = "##{tc.id}#{label ? " #{label}" : ''}"
    end

    # the method's name as Ruby shows it: Foo#bar, Foo.bar (a singleton's), bar (a top-level method)
    def name_of(tp)
      owner = tp.defined_class
      meth = tp.method_id
      return meth.to_s if owner.nil? || owner == ::Object
      if owner.singleton_class?
        who = tp.self
        "#{who.is_a?(::Module) ? (who.name || who.inspect) : owner.inspect}.#{meth}"
      else
        "#{owner.name || owner.inspect}##{meth}"
      end
    end

    # a function as the agent named it: [file, class, op, method]
    def spec(name)
      file, rest = name.include?(':') && !name.include?('::') || name =~ /\A[^:]+\.rb:/ ? name.split(':', 2) : [nil, name]
      m = /\A(?:(.+?)([#.]|::))?([^#.:\s]+)\z/.match(rest.strip) or return nil
      [file, m[1], m[2] == '::' ? '.' : m[2], m[3].to_sym]
    end

    def matches?(spec, fn, path)
      file, klass, op, meth = spec
      return false if file && !(path == file || path.end_with?("/#{file}") ||
                                ::File.basename(path, '.rb') == file)
      return true if klass.nil?
      return !fn.match?(/[#.]/) if klass == 'Object' && op != '.'
      owner, sep, _ = fn.rpartition(op == '#' ? '#' : /[#.]/)
      return false if sep.empty?
      owner == klass || owner.end_with?("::#{klass}")
    end

    def connect(path)
      return if @out && @pid == ::Process.pid
      require 'socket' unless defined?(::UNIXSocket) # loaded by rdbg: a trap's context (a pause) cannot require
      @out = ::UNIXSocket.new(path)
      @out.sync = true
      @pid = ::Process.pid
      at_exit { finish }
    end

    def send_items(items)
      return if items.empty? || @out.nil? || @pid != ::Process.pid
      @out.write(::JSON.generate(items) + "\n")
    rescue ::Exception
      @out = nil
    end

    def emit(item)
      @buf << item
      now = clock
      return unless @buf.size >= BATCH || now - @at > FLUSH_S
      @at = now
      items, @buf = @buf, []
      send_items(items)
    end

    def flush
      items, @buf = @buf, []
      @at = clock
      send_items(items)
    end

    def arm_calls(path, id, functions, depth, max, chars)
      sync do
        connect(path)
        specs = {}
        functions.each do |f|
          s = spec(f) or next
          (specs[s[3]] ||= []) << [f, s]
        end
        @gen += 1
        @calls = { id: id, specs: specs, depth: depth, max: max, chars: chars, count: 0, bound: false,
                   called: {}, gen: @gen }
        @open = {}.compare_by_identity
        retrace
      end
      known = known_methods
      unmatched = functions.reject { |f| (s = spec(f)) && known.any? { |fn, path| s[3].to_s == fn[/[^#.]*\z/] && matches?(s, fn, path) } }
      { 'unmatched' => unmatched, 'known' => unmatched.empty? ? [] : known.map(&:first).uniq.first(5000) }
    end

    def arm_raised(path, id, chars)
      sync do
        connect(path)
        @raised = { id: id, chars: chars }
        retrace
      end
      true
    end

    def disarm(id)
      sync do
        info = {}
        if @calls && @calls[:id] == id
          info = calls_done(@calls)
          @calls = nil
        end
        if @raised && @raised[:id] == id
          @pending.each_value { |p| emit(raised_item(p, nil)) if p[2] }
          @pending.clear
          @raised = nil
        end
        @pending.clear unless @calls || @raised
        retrace
        emit(['done', id, info])
        flush
        true
      end
    end

    def finish
      LOCK.synchronize do
        emit(['done', @calls[:id], calls_done(@calls)]) if @calls
        if @raised
          @pending.each_value { |p| emit(raised_item(p, nil)) if p[2] }
          emit(['done', @raised[:id], {}])
        end
        @calls = @raised = nil
        flush
        @tps.each(&:disable)
        @out&.close rescue nil
        @out = nil
      end
    rescue ::Exception
      nil
    end

    # the calls still running, recorded unended; what the recording says at its end
    def calls_done(c)
      @open.keys.sort_by { |r| r[:seq] }.each { |r| emit(call_item(c, r, nil, nil, false)) }
      @open = {}.compare_by_identity
      never = c[:specs].values.flatten(1).map(&:first).reject { |f| c[:called][f] }
      { 'bound' => c[:bound], 'never' => never, 'known' => never.empty? ? [] : known_methods.map(&:first).uniq.first(5000) }
    end

    # the methods of the user's code loaded now: [name, file]
    def known_methods
      found = []
      ::ObjectSpace.each_object(::Module) do |mod|
        next if mod.singleton_class?
        [[mod, '#', mod.instance_methods(false) + mod.private_instance_methods(false)],
         [mod.singleton_class, '.', mod.singleton_methods(false)]].each do |owner, op, names|
          names.each do |meth|
            path = (owner.instance_method(meth).source_location&.first rescue nil)
            next unless user?(path)
            found << [mod == ::Object ? meth.to_s : "#{mod.name || mod.inspect}#{op}#{meth}", path]
          end
        end
        break if found.size > 20_000
      end
      found
    end

    def retrace
      @tps.each(&:disable)
      @lines&.disable
      @tps = []
      return unless @calls || @raised
      if @calls
        # methods written in Ruby only: core's C methods (Integer#+, attribute readers) are no callee of the program's
        @tps << ::TracePoint.new(:call) { |tp| on_call(tp) }
        @tps << ::TracePoint.new(:return) { |tp| on_return(tp) }
      end
      @tps << ::TracePoint.new(:raise) { |tp| on_raise(tp) }
      @lines = ::TracePoint.new(:line) { |tp| on_line(tp) }
      @tps.each(&:enable)
      @lines.enable unless @pending.empty?
    end

    def stack
      st = ::Thread.current[:__polydbg_calls]
      return st if st && st[0] == @gen
      ::Thread.current[:__polydbg_calls] = [@gen]
    end

    def on_call(tp)
      c = @calls or return
      list = c[:specs][tp.method_id]
      if list.nil? # not named: only a callee of a recorded call is followed
        st = ::Thread.current[:__polydbg_calls]
        return if st.nil? || st.size < 2 || st[0] != @gen
      end
      st = stack
      fn = list && name_of(tp)
      named = list && list.find { |_, s| matches?(s, fn, tp.path) }
      if named
        level = 0
        c[:called][named[0]] = true
      elsif st.size > 1
        top = st.last
        up = top.is_a?(::Hash) ? top[:level] : top
        # a gem's or Ruby's own method is no callee: not recorded, and no level (what it calls back is one below up)
        return st << up unless user?(tp.path)
        level = up + 1
      else
        return
      end
      return st << level if level > c[:depth] || c[:bound] # counted, so that the returns pair, not recorded
      loc = ::Kernel.caller_locations(CALLER, 1)&.first
      return st << level if tp.method_id == :=== && loc&.label&.start_with?('rescue in') # a rescue clause's match
      b = tp.binding
      args = b ? tp.parameters.filter_map { |_, n| n && b.local_variable_defined?(n) ? [n.to_s, text(b.local_variable_get(n), c[:chars])] : nil } : []
      @seq += 1
      r = { fn: fn || name_of(tp), args: args, caller: loc && "#{loc.label} (#{loc.path}:#{loc.lineno})",
            thread: thread_name, t0: clock, level: level, file: tp.path, line: tp.lineno, seq: @seq }
      LOCK.synchronize { @open[r] = true }
      st << r
    rescue ::Exception
      nil
    end

    def on_return(tp)
      st = ::Thread.current[:__polydbg_calls]
      return if st.nil? || st.size < 2 || st[0] != @gen
      r = st.pop
      return unless r.is_a?(::Hash)
      c = @calls or return
      pend = @pending[::Fiber.current]
      LOCK.synchronize do
        @open.delete(r)
        return unless @calls.equal?(c)
        if pend && pend[1] > r[:seq]
          emit(call_item(c, r, nil, raised_text(pend[0], c[:chars]), true))
        else
          emit(call_item(c, r, text(tp.return_value, c[:chars]), nil, true))
        end
        c[:count] += 1
        if c[:count] >= c[:max] # the last record polydbg waits for: sent now
          c[:bound] = true
          flush
        end
      end
    rescue ::Exception
      nil
    end

    def call_item(c, r, returned, raised, ended)
      [c[:id], r[:fn], r[:args], returned, raised, r[:caller], r[:thread],
       ended ? ((clock - r[:t0]) * 1e6).round(1) : nil, r[:level], r[:file], r[:line], ended, r[:seq]]
    end

    def on_raise(tp)
      path = tp.path
      return if path&.start_with?(DEBUGGER)
      exc = tp.raised_exception
      @seq += 1
      where = nil
      if @raised
        if user?(path)
          where = [path, tp.lineno, raiser(tp), true]
        else # a library's raise, for the user's innermost frame: its depth (from the stack's bottom) kept
          locs = ::Kernel.caller_locations(1)
          at = locs.index { |l| user?(l.path) }
          where = [locs[at].path, locs[at].lineno, locs[at].label, false, locs.size - at] if at
        end
      end
      LOCK.synchronize do
        old = @pending[::Fiber.current]
        emit(raised_item(old, nil)) if old && old[2] && !old[0].equal?(exc)
        @pending[::Fiber.current] = [exc, @seq, where, thread_name]
      end
      @lines.enable unless @lines.enabled?
    rescue ::Exception
      nil
    end

    # the method that raised: a C method's caller (Integer("x") raises in Kernel#Integer, on its caller's line)
    def raiser(tp)
      owner = tp.defined_class
      in_c = owner && (owner.instance_method(tp.method_id).source_location.nil? rescue false)
      return name_of(tp) if owner && !in_c
      ::Kernel.caller_locations(in_c ? 4 : 3, 1)&.first&.label || '<main>'
    end

    # the first line run after a raise is where it was rescued (or an ensure on its way); the hook stays on once on
    # (turning a :line hook on or off walks every method's code: 5 ms in a program under rdbg, more than many lines)
    def on_line(tp)
      pend = @pending[::Fiber.current] or return
      return if tp.path&.start_with?(DEBUGGER)
      here = ::Kernel.caller_locations(2, 1)&.first&.label.to_s
      return if here.start_with?('ensure in ') # an ensure run on the exception's way out: not its handler
      # a library's exception rescued above the user's frame it went through (minitest's assertion, rescued by its
      # runner) is the user's; one rescued inside the library, below (deeper than) that frame, is left out
      where = pend[2]
      caught = "#{caught_label(tp)} (#{tp.path}:#{tp.lineno})"
      caught = "a rescue with no line of its own, or a method in C, before #{caught}" unless $!.equal?(pend[0])
      mine = where && (where[3] || user?(tp.path) || ::Kernel.caller_locations(2).size <= where[4])
      LOCK.synchronize do
        @pending.delete(::Fiber.current)
        emit(raised_item(pend, caught)) if mine
      end
    rescue ::Exception
      nil
    end

    def caught_label(tp) = tp.method_id ? name_of(tp) : '<main>'

    def raised_item(pend, caught)
      exc, _, where, thread = pend
      chars = @raised ? @raised[:chars] : 200
      ['r', @raised ? @raised[:id] : 0, exc.class.name || exc.class.inspect,
       text_of(exc.message.to_s, chars), where[0], where[1], where[2], thread, caught]
    rescue ::Exception
      ['r', 0, '?', '', nil, nil, nil, nil, caught]
    end
  end
end
